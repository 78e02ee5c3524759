// Loading a bundle folder: bundle.json (zod), every listed file's size and sha256, the sessions of
// the session table checked against the manifest (their external data only in listed files), the
// tokenizer and the chat template.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ChatTemplate } from './chat';
import { EncoderGraph, type StateEncoder } from './encoder';
import { EngineError, invalid } from './errors';
import { checkExternalData } from './external-data';
import { Hypernetwork } from './hypernet';
import { LanguageModel } from './lm';
import { MANIFEST_FILE, parseManifest, type BundleManifest } from './manifest';
import { defaultLogger, Session, type Provider, type SessionOptions } from './ort';
import { checkSessionIO, SESSION_TABLE } from './session-table';
import { BundleTokenizer, tokenText, type TokenizerConfig } from './tokenizer';

export interface LoadOptions extends SessionOptions {
  /** Hash every file against bundle.json (default true; sizes are always checked). */
  verifyHashes?: boolean;
}

/** The execution provider a bundle was asked for, the one its sessions run on, and why they differ. */
export interface ProviderInfo {
  readonly requested: Provider;
  readonly used: Provider;
  readonly fallback: string | null;
}

export class Bundle {
  constructor(
    readonly dir: string,
    readonly manifest: BundleManifest,
    readonly lm: LanguageModel,
    readonly tokenizer: BundleTokenizer,
    readonly chat: ChatTemplate,
    /** Milliseconds from reading bundle.json to usable sessions. */
    readonly loadMs: number,
    /** hypernet.onnx, when bundle.json has a `hypernet` (needed to compile skills). */
    readonly hypernet: Hypernetwork | null = null,
    /** encoder.onnx, when bundle.json has `io.encoder`. */
    readonly encoderGraph: EncoderGraph | null = null,
    private readonly requested: Provider = 'cpu',
    private readonly fallback: string | null = null,
  ) {}

  get provider(): ProviderInfo {
    return { requested: this.requested, used: this.lm.session.provider, fallback: this.fallback };
  }

  /** Where compile reads the encoder states: encoder.onnx when present, else lm.onnx. */
  get encoder(): StateEncoder {
    return this.encoderGraph ?? this.lm;
  }

  async dispose(): Promise<void> {
    await this.lm.session.dispose();
    await this.encoderGraph?.session.dispose();
    await this.hypernet?.session.dispose();
  }
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function readJson(dir: string, file: string): Promise<unknown> {
  const path = join(dir, file);
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ENOENT' ? new EngineError('not_found', `${path}: missing`, { file }) : err;
  });
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(`${path}: not valid JSON (${(err as Error).message})`, { file });
  }
}

/** Every file bundle.json lists exists with its size and (unless skipped) its sha256. */
async function verifyFiles(dir: string, manifest: BundleManifest, hashes: boolean): Promise<void> {
  await Promise.all(
    Object.entries(manifest.files).map(async ([file, want]) => {
      const path = join(dir, file);
      const info = await stat(path).catch(() => null);
      if (!info?.isFile()) throw new EngineError('not_found', `${path}: listed in bundle.json but missing`, { file });
      if (info.size !== want.bytes)
        throw invalid(`${path}: ${info.size} bytes, bundle.json says ${want.bytes} (truncated or replaced?)`, { file });
      if (!hashes) return;
      const got = await sha256(path);
      if (got !== want.sha256)
        throw invalid(`${path}: sha256 ${got} does not match bundle.json's ${want.sha256}`, {
          file,
          expected: want.sha256,
          actual: got,
        });
    }),
  );
}

/** The library's own errors ("Tokenizer must contain a model") do not say which file: this does. */
function readTokenizer(dir: string, file: string, json: unknown, config: TokenizerConfig): BundleTokenizer {
  try {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error('not a JSON object');
    const tokenizer = new BundleTokenizer(json, config);
    tokenizer.encode('Hello, world.'); // some broken vocabularies only fail on first use
    return tokenizer;
  } catch (err) {
    throw invalid(`${join(dir, file)}: not a tokenizer this studio can read (${(err as Error).message})`, { file });
  }
}

export async function loadBundle(dir: string, options: LoadOptions = {}): Promise<Bundle> {
  const t0 = performance.now();
  const manifest = parseManifest(await readJson(dir, MANIFEST_FILE), join(dir, MANIFEST_FILE));
  await verifyFiles(dir, manifest, options.verifyHashes ?? true);

  const rawConfig = await readJson(dir, manifest.tokenizer.config);
  if (rawConfig === null || typeof rawConfig !== 'object' || Array.isArray(rawConfig)) {
    throw invalid(`${join(dir, manifest.tokenizer.config)}: not a mapping of tokenizer settings`, {
      file: manifest.tokenizer.config,
    });
  }
  const tokConfig = rawConfig as TokenizerConfig;
  const tokenizer = readTokenizer(
    dir,
    manifest.tokenizer.file,
    await readJson(dir, manifest.tokenizer.file),
    tokConfig,
  );
  if (typeof tokConfig.chat_template !== 'string')
    throw invalid(`${join(dir, manifest.tokenizer.config)}: chat_template is missing or not a string`, {
      file: manifest.tokenizer.config,
    });
  const chat = new ChatTemplate(
    tokConfig.chat_template,
    {
      bos_token: tokenText(tokConfig.bos_token),
      eos_token: tokenText(tokConfig.eos_token),
      pad_token: tokenText(tokConfig.pad_token),
    },
    `${manifest.tokenizer.config} chat_template`,
  );

  const sessions = new Map<string, Session>();
  try {
    let open = options;
    for (const row of SESSION_TABLE) {
      if (!row.present(manifest)) continue;
      checkExternalData(dir, row.file(manifest), manifest); // e.g. encoder.onnx reading lm.onnx's weights
      const session = await Session.open(join(dir, row.file(manifest)), open);
      sessions.set(row.key, session);
      checkSessionIO(row, session, manifest);
      if (session.fallback && open.provider !== 'cpu') {
        // Said once per bundle; the other graphs go straight to cpu instead of failing the same way.
        (options.logger ?? defaultLogger)(`bundle ${manifest.id}: ${session.fallback}`);
        open = { ...options, provider: 'cpu' };
      }
    }
  } catch (err) {
    await Promise.all([...sessions.values()].map((s) => s.dispose()));
    throw err;
  }
  const lm = new LanguageModel(sessions.get('lm')!, manifest);
  const hyper = sessions.get('hypernet');
  const encoder = sessions.get('encoder');
  return new Bundle(
    dir,
    manifest,
    lm,
    tokenizer,
    chat,
    performance.now() - t0,
    hyper ? new Hypernetwork(hyper, manifest) : null,
    encoder ? new EncoderGraph(encoder, manifest) : null,
    options.provider ?? 'cpu',
    [...sessions.values()].find((s) => s.fallback)?.fallback ?? null,
  );
}
