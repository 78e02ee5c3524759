// Execution providers (docs/providers.md): cpu is used as asked; cuda and webgpu fall back to cpu with
// one clear message where they cannot start (no CUDA libraries, no WebGPU adapter), and the fallen-back
// bundle computes what cpu computes; engine.info reports it; where a software Vulkan device exists
// (SwiftShader from Debian's chromium) WebGPU runs and its logits match cpu's within 1e-3.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../../main/engine';
import { APP_ROOT } from '../../../main/paths';
import { direct, studioSuite } from '../api/transports';
import { FIXTURE_DIR, maxAbsDiff } from './fixture';

const CHILD = join(APP_ROOT, 'tests/int/engine/provider-child.ts');
const ORT_BIN = join(APP_ROOT, 'node_modules/onnxruntime-node/bin');
/** The CUDA provider libraries onnxruntime-node downloads on request (not in the npm package). */
const cudaInstalled = (() => {
  const find = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((e) =>
      e.isDirectory() ? find(join(dir, e.name)) : e.name === 'libonnxruntime_providers_cuda.so',
    );
  return existsSync(ORT_BIN) && find(ORT_BIN);
})();
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';

interface ChildOut {
  provider: { requested: string; used: string; fallback: string | null };
  logs: string[];
  last: Record<'none' | 'r4', number[]>;
}

/** Runs a child script on BUNDLE and PROVIDER under `env` (WebGPU's device is chosen at process start). */
function spawnChild<T>(script: string, bundle: string, provider: string, env: Record<string, string>): T {
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, bundle, provider], {
    cwd: APP_ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 600_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

const child = (provider: string, env: Record<string, string>) =>
  spawnChild<ChildOut>(CHILD, FIXTURE_DIR, provider, env);

describe('execution providers', () => {
  let cpu: ChildOut;
  beforeAll(() => {
    cpu = child('cpu', {});
  }, 120_000);

  it('cpu runs on cpu, with nothing to report', () => {
    expect(cpu.provider).toEqual({ requested: 'cpu', used: 'cpu', fallback: null });
    expect(cpu.logs).toEqual([]);
  });

  it.skipIf(cudaInstalled)(
    'cuda without its libraries falls back to cpu, says so once, computes the same',
    () => {
      const out = child('cuda', {});
      expect(out.provider.requested).toBe('cuda');
      expect(out.provider.used).toBe('cpu');
      expect(out.provider.fallback).toMatch(/execution provider 'cuda' is unavailable .*; using cpu/);
      expect(out.provider.fallback).toContain('ONNXRUNTIME_NODE_INSTALL=cuda12');
      expect(out.logs).toHaveLength(1);
      expect(out.logs[0]).toContain(out.provider.fallback);
      expect(out.last).toEqual(cpu.last);
    },
    120_000,
  );

  it('webgpu without an adapter falls back to cpu and says what to do', () => {
    const out = child('webgpu', { VK_ICD_FILENAMES: '/nonexistent/icd.json', LD_LIBRARY_PATH: '' });
    expect(out.provider).toMatchObject({ requested: 'webgpu', used: 'cpu' });
    expect(out.provider.fallback).toMatch(/execution provider 'webgpu' is unavailable .*adapter/i);
    expect(out.provider.fallback).toContain('docs/providers.md');
    expect(out.last).toEqual(cpu.last);
  }, 120_000);

  it.skipIf(!existsSync(SWIFTSHADER))(
    'webgpu on a software Vulkan device (SwiftShader): logits within 1e-3 of cpu, with and without an adapter',
    () => {
      const out = child('webgpu', { VK_ICD_FILENAMES: SWIFTSHADER, LD_LIBRARY_PATH: '/usr/lib/chromium' });
      expect(out.provider).toEqual({ requested: 'webgpu', used: 'webgpu', fallback: null });
      for (const k of ['none', 'r4'] as const) expect(maxAbsDiff(out.last[k], cpu.last[k]), k).toBeLessThan(1e-3);
      expect(maxAbsDiff(cpu.last.none, cpu.last.r4)).toBeGreaterThan(1e-2); // the adapter changed something
    },
    600_000,
  );
});

describe('the layered train step on each provider', () => {
  const LAYERED = join(APP_ROOT, 'tests/fixtures/bundle-tiny-layered');
  const LAYERED_CHILD = join(APP_ROOT, 'tests/int/engine/layered-provider-child.ts');
  interface StepOut {
    used: string;
    losses: number[];
    factors: Record<string, number[]>;
  }
  const steps = (provider: string, env: Record<string, string> = {}) =>
    spawnChild<StepOut>(LAYERED_CHILD, LAYERED, provider, env);

  it.skipIf(!existsSync(SWIFTSHADER))(
    'webgpu on SwiftShader: two steps land within 1e-5 of cpu (factors and losses)',
    () => {
      const cpu = steps('cpu');
      const gpu = steps('webgpu', { VK_ICD_FILENAMES: SWIFTSHADER, LD_LIBRARY_PATH: '/usr/lib/chromium' });
      expect(gpu.used).toBe('webgpu');
      const names = Object.keys(cpu.factors);
      expect(names.length).toBeGreaterThan(0);
      for (const n of names) expect(maxAbsDiff(gpu.factors[n]!, cpu.factors[n]!), n).toBeLessThan(1e-5);
      gpu.losses.forEach((l, i) => expect(Math.abs(l - cpu.losses[i]!)).toBeLessThan(1e-4));
    },
    600_000,
  );
});

describe('engine.info says where the bundle runs', () => {
  let bundle: Bundle;
  beforeAll(async () => {
    bundle = await loadBundle(FIXTURE_DIR, { provider: 'cpu' });
  });
  afterAll(async () => bundle?.dispose());
  // Bundles load on first use, so opening these before the tests changes nothing they see.
  const webgpu = studioSuite(direct, 'pskills-provider-', { defaultBundleDir: FIXTURE_DIR, provider: 'webgpu' });
  const plain = studioSuite(direct, 'pskills-provider-');

  it('the --provider override reaches the load, and the fallback reaches engine.info', async () => {
    expect(bundle.provider).toEqual({ requested: 'cpu', used: 'cpu', fallback: null });
    const logs: string[] = [];
    const warn = console.warn;
    console.warn = (m: string) => logs.push(m);
    try {
      const info = await webgpu.studio.engine.load(FIXTURE_DIR);
      expect(info.provider?.requested).toBe('webgpu');
      // No adapter in this process's environment unless a GPU or a software device is visible.
      if (info.provider?.used === 'cpu') {
        expect(info.provider.fallback).toMatch(/'webgpu' is unavailable/);
        expect(logs.some((l) => l.includes("'webgpu' is unavailable"))).toBe(true);
      } else expect(info.provider?.fallback).toBeNull();
    } finally {
      console.warn = warn;
    }
  }, 120_000);

  it('the executionProvider setting is read at each load', async () => {
    const { api } = plain;
    await api.settings.set({ executionProvider: 'webgpu' });
    expect((await api.engine.loadBundle({ dir: FIXTURE_DIR })).provider?.requested).toBe('webgpu');
    await api.settings.set({ executionProvider: 'cpu' });
    const info = await api.engine.loadBundle({ dir: FIXTURE_DIR });
    expect(info.provider).toEqual({ requested: 'cpu', used: 'cpu', fallback: null });
    await expect(api.settings.set({ executionProvider: 'tpu' as 'cpu' })).rejects.toThrow(/executionProvider/);
  }, 120_000);
});
