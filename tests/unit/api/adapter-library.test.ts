// The services' shared parts of the adapter library: one cache of decoded adapters and one registry
// of the current bundle (main/api/services/adapter-cache.ts, bundle-registry.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { StudioError } from '../../../common/errors';
import type { Adapter } from '../../../main/adapters/types';
import { AdapterCache } from '../../../main/api/services/adapter-cache';
import { BundleRegistry } from '../../../main/api/services/bundle-registry';
import type { Bundle } from '../../../main/engine';
import { parseManifest } from '../../../main/engine/manifest';
import { fixtureAdapter, FIXTURE_SHAPES } from '../../int/adapters/fixture';
import { FIXTURE_DIR } from '../../int/engine/fixture';

const manifestText = readFileSync(join(FIXTURE_DIR, 'bundle.json'));
const manifest = parseManifest(JSON.parse(manifestText.toString('utf8')));
const sha = (n: number) => n.toString(16).padStart(64, '0');

describe('AdapterCache', () => {
  const stored = new Map<number, Adapter>([1, 2, 3].map((n) => [n, fixtureAdapter(n)]));
  const repo = () => ({ load: vi.fn((rowId: number) => stored.get(rowId)!) });

  it('decodes an adapter once per tensor bytes and serves the same engine adapter', () => {
    const r = repo();
    const cache = new AdapterCache(r);
    const a = cache.get({ rowId: 1, tensorsSha256: sha(1) }, manifest);
    expect(cache.get({ rowId: 1, tensorsSha256: sha(1) }, manifest)).toBe(a);
    expect(a.folded).toBe(true);
    expect(r.load).toHaveBeenCalledTimes(1);
    // Keyed by bytes, not row id: a reused row id with other bytes is decoded anew.
    expect(cache.get({ rowId: 1, tensorsSha256: sha(9) }, manifest)).not.toBe(a);
    expect(r.load).toHaveBeenCalledTimes(2);
  });

  it('keeps the most recently used up to its limit', () => {
    const r = repo();
    const cache = new AdapterCache(r, 2);
    const first = cache.get({ rowId: 1, tensorsSha256: sha(1) }, manifest);
    cache.get({ rowId: 2, tensorsSha256: sha(2) }, manifest);
    cache.get({ rowId: 1, tensorsSha256: sha(1) }, manifest); // 1 is now the most recent
    cache.get({ rowId: 3, tensorsSha256: sha(3) }, manifest); // evicts 2
    expect(cache.size).toBe(2);
    expect(cache.get({ rowId: 1, tensorsSha256: sha(1) }, manifest)).toBe(first);
    expect(r.load).toHaveBeenCalledTimes(3);
    cache.get({ rowId: 2, tensorsSha256: sha(2) }, manifest);
    expect(r.load).toHaveBeenCalledTimes(4);
  });

  it('serves what put stored without loading, and refuses an adapter that does not fit the bundle', () => {
    const r = repo();
    const cache = new AdapterCache(r);
    const other = new AdapterCache({ load: () => fixtureAdapter(4, { shapes: [{ ...FIXTURE_SHAPES[0]!, dIn: 32 }] }) });
    const made = new AdapterCache(r).get({ rowId: 2, tensorsSha256: sha(2) }, manifest);
    cache.put(sha(2), made);
    expect(cache.get({ rowId: 2, tensorsSha256: sha(2) }, manifest)).toBe(made);
    expect(r.load).toHaveBeenCalledTimes(1); // by the other cache only
    expect(() => other.get({ rowId: 4, tensorsSha256: sha(4) }, manifest)).toThrow(/d_in 32, the bundle has 64/);
    expect(other.size).toBe(0);
  });
});

describe('BundleRegistry', () => {
  const bundle = () => ({ dir: FIXTURE_DIR, manifest }) as unknown as Bundle;

  it('hashes bundle.json and registers each loaded bundle once, again after a reload', async () => {
    let current = bundle();
    const want = createHash('sha256').update(manifestText).digest('hex');
    const repo = { registerBundle: vi.fn((sha256: string) => ({ id: 7, sha256 })) };
    const registry = new BundleRegistry({ current: async () => current }, repo);
    expect(await registry.current()).toEqual({ bundle: current, sha256: want, rowId: 7 });
    await registry.current();
    expect(repo.registerBundle).toHaveBeenCalledTimes(1);
    expect(repo.registerBundle).toHaveBeenCalledWith(want, manifest, FIXTURE_DIR);
    current = bundle(); // engine.loadBundle made a new one
    expect((await registry.current()).bundle).toBe(current);
    expect(repo.registerBundle).toHaveBeenCalledTimes(2);
  });

  it('takes the identity the store keeps for the same model', async () => {
    const registry = new BundleRegistry(
      { current: async () => bundle() },
      { registerBundle: () => ({ id: 3, sha256: 'a'.repeat(64) }) },
    );
    expect(await registry.current()).toMatchObject({ sha256: 'a'.repeat(64), rowId: 3 });
  });

  it('currentOrNull: null when no bundle can be loaded, other errors thrown', async () => {
    const missing = new BundleRegistry(
      { current: () => Promise.reject(new StudioError('not_found', 'no default bundle')) },
      { registerBundle: (sha256: string) => ({ id: 1, sha256 }) },
    );
    expect(await missing.currentOrNull()).toBeNull();
    await expect(missing.current()).rejects.toThrow(/no default bundle/);
    const broken = new BundleRegistry(
      { current: () => Promise.reject(new StudioError('invalid_input', 'bad manifest')) },
      { registerBundle: (sha256: string) => ({ id: 1, sha256 }) },
    );
    await expect(broken.currentOrNull()).rejects.toThrow(/bad manifest/);
  });

  it('retries a bundle whose bundle.json could not be read', async () => {
    const b = { dir: join(FIXTURE_DIR, 'no-such-dir'), manifest };
    const registry = new BundleRegistry(
      { current: async () => b as unknown as Bundle },
      { registerBundle: (sha256: string) => ({ id: 1, sha256 }) },
    );
    await expect(registry.current()).rejects.toThrow(/no-such-dir/);
    b.dir = FIXTURE_DIR; // the same bundle object: a cached failure would still reject
    expect((await registry.current()).rowId).toBe(1);
  });
});
