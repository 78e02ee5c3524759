// Loading a bundle folder with its sessions: the files (bundle-info.ts), then the sessions of the
// session table checked against the manifest (their external data only in listed files).
import { join } from 'node:path';
import { readBundleFiles, type BundleInfo, type ProviderInfo } from './bundle-info';
import type { ChatTemplate } from './chat';
import { EncoderGraph, type StateEncoder } from './encoder';
import { checkExternalData } from './external-data';
import { Hypernetwork } from './hypernet';
import { LanguageModel } from './lm';
import type { BundleManifest } from './manifest';
import { defaultLogger, Session, type Provider, type SessionOptions } from './ort';
import { checkSessionIO, SESSION_TABLE } from './session-table';
import type { BundleTokenizer } from './tokenizer';

export type { BundleInfo, ProviderInfo } from './bundle-info';

export interface LoadOptions extends SessionOptions {
  /** Hash every file against bundle.json (default true; sizes are always checked). */
  verifyHashes?: boolean;
}

export class Bundle implements BundleInfo {
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

  private readonly disposers: (() => Promise<void>)[] = [];

  /** Run `fn` when the bundle is disposed (e.g. to close train-step sessions kept open on it). */
  onDispose(fn: () => Promise<void>): void {
    this.disposers.push(fn);
  }

  async dispose(): Promise<void> {
    for (const fn of this.disposers.splice(0)) await fn().catch(() => undefined);
    await this.lm.session.dispose();
    await this.encoderGraph?.session.dispose();
    await this.hypernet?.session.dispose();
  }
}

export async function loadBundle(dir: string, options: LoadOptions = {}): Promise<Bundle> {
  const t0 = performance.now();
  const { manifest, tokenizer, chat } = await readBundleFiles(dir, options);
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
