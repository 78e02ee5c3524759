// The one cache of decoded adapters: stored tensors in the engine's form (folded, checked to fit),
// for chat, compare, the OpenAI endpoint's skill models and the global adapter. Keyed by the tensor
// bytes' sha256, so it can never serve another adapter's tensors (row ids are reused after a delete,
// and another process may write the same library); the most recently used are kept.
import { checkAdapterFits, foldAdapter, type BundleManifest, type EngineAdapter } from '../../engine';
import type { AdaptersRepo } from '../../store/adapters-repo';

/** Decoded adapters kept (a compiled adapter is small; a few dozen fit). */
export const ADAPTER_CACHE_SIZE = 32;

export class AdapterCache {
  private readonly decoded = new Map<string, EngineAdapter>();

  constructor(
    private readonly repo: Pick<AdaptersRepo, 'load'>,
    readonly limit = ADAPTER_CACHE_SIZE,
  ) {}

  /** The stored adapter in the engine's form, checked against the bundle's manifest; decoded once. */
  get(row: { rowId: number; tensorsSha256: string }, manifest: BundleManifest): EngineAdapter {
    const adapter = this.decoded.get(row.tensorsSha256) ?? foldAdapter(this.repo.load(row.rowId));
    checkAdapterFits(manifest, adapter); // the engine remembers adapters that fit, per manifest
    this.put(row.tensorsSha256, adapter);
    return adapter;
  }

  /** Keeps an adapter just made (e.g. compiled) under the sha256 of the bytes it was stored as. */
  put(tensorsSha256: string, adapter: EngineAdapter): void {
    this.decoded.delete(tensorsSha256);
    this.decoded.set(tensorsSha256, adapter);
    while (this.decoded.size > this.limit) this.decoded.delete(this.decoded.keys().next().value!);
  }

  get size(): number {
    return this.decoded.size;
  }
}
