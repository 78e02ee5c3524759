// The engine's current bundle as the adapter library knows it: the bundle, its sha256 (of
// bundle.json, which lists the sha256 of every other file) and its row in `bundles`. One registry
// shared by the adapter, compile and model services, so they agree on the bundle and hash it once.
import { join } from 'node:path';
import { StudioError } from '../../../common/errors';
import type { BundleInfo } from '../../engine';
import { readGated } from '../../files/read-gate';
import { MANIFEST_FILE } from '../../engine/manifest';
import { sha256Hex } from '../../store/adapter-tensors';
import type { AdaptersRepo } from '../../store/adapters-repo';
import type { EngineService } from './engine-service';

export interface CurrentBundle {
  bundle: BundleInfo;
  /** the hash adapters are keyed by: sha256 of the bundle's bundle.json, or of the stored bundle.json of
   * the same model (AdaptersRepo.registerBundle) */
  sha256: string;
  /** the bundle's row id in the store */
  rowId: number;
}

export class BundleRegistry {
  /** Per loaded bundle (a Bundle object is immutable): hashed and registered once. */
  private readonly known = new WeakMap<BundleInfo, Promise<{ sha256: string; rowId: number }>>();

  constructor(
    private readonly engine: Pick<EngineService, 'current'>,
    private readonly repo: Pick<AdaptersRepo, 'registerBundle'>,
  ) {}

  /** The engine's current bundle (loading the default on first use), its hash and its row. */
  async current(): Promise<CurrentBundle> {
    const bundle = await this.engine.current();
    let known = this.known.get(bundle);
    if (!known) {
      known = this.register(bundle);
      this.known.set(bundle, known);
      known.catch(() => this.known.delete(bundle)); // a failed read is retried next time
    }
    return { bundle, ...(await known) };
  }

  /** As `current`, but null when no bundle can be loaded (`not_found`: no default bundle). */
  async currentOrNull(): Promise<CurrentBundle | null> {
    return this.current().catch((err: unknown) => {
      if (err instanceof StudioError && err.code === 'not_found') return null;
      throw err;
    });
  }

  private async register(bundle: BundleInfo): Promise<{ sha256: string; rowId: number }> {
    const file = sha256Hex(await readGated(join(bundle.dir, MANIFEST_FILE), 'bundle.json'));
    const { id, sha256 } = this.repo.registerBundle(file, bundle.manifest, bundle.dir);
    return { sha256, rowId: id };
  }
}
