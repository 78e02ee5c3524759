// What a bundle is without its sessions: bundle.json (zod), every listed file's size and sha256, the
// tokenizer and the chat template. The main thread holds only this (prompts are rendered and counted
// there); the sessions live in the engine worker (bundle.ts, engine-worker.ts).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ChatTemplate } from './chat';
import { EngineError, invalid } from './errors';
import { MANIFEST_FILE, parseManifest, type BundleManifest } from './manifest';
import type { Provider } from './ort';
import { BundleTokenizer, tokenText, type TokenizerConfig } from './tokenizer';

/** The execution provider a bundle was asked for, the one its sessions run on, and why they differ. */
export interface ProviderInfo {
  readonly requested: Provider;
  readonly used: Provider;
  readonly fallback: string | null;
}

export interface BundleFiles {
  readonly dir: string;
  readonly manifest: BundleManifest;
  readonly tokenizer: BundleTokenizer;
  readonly chat: ChatTemplate;
}

/** A loaded bundle as every thread sees it: a Bundle (with sessions) or the main thread's handle. */
export interface BundleInfo extends BundleFiles {
  /** Milliseconds from reading bundle.json to usable sessions. */
  readonly loadMs: number;
  readonly provider: ProviderInfo;
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

export async function readBundleFiles(dir: string, options: { verifyHashes?: boolean } = {}): Promise<BundleFiles> {
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
  return { dir, manifest, tokenizer, chat };
}
