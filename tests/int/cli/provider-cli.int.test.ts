// `--provider` as a user types it: a provider this machine lacks still answers, on cpu, with the
// reason on stderr; a name that is no provider is a usage error naming the flag.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const BIN = join(ROOT, 'bin', 'pskills.mjs');
const BUNDLE = join(ROOT, 'tests', 'fixtures', 'bundle-tiny');
const ORT_BIN = join(ROOT, 'node_modules/onnxruntime-node/bin');
const cudaInstalled = (function find(dir: string): boolean {
  return (
    existsSync(dir) &&
    readdirSync(dir, { withFileTypes: true }).some((e) =>
      e.isDirectory() ? find(join(dir, e.name)) : e.name === 'libonnxruntime_providers_cuda.so',
    )
  );
})(ORT_BIN);

const pskills = (...args: string[]) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pskills-provider-cli-'));
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const generate = (provider: string) =>
  pskills(
    'generate',
    '--bundle',
    BUNDLE,
    '--prompt',
    'Write the steps.',
    '--max-tokens',
    '6',
    '--json',
    '--provider',
    provider,
  );

describe('pskills --provider', () => {
  it.skipIf(cudaInstalled)(
    'cuda without its libraries: the same answer as cpu, and the reason on stderr',
    () => {
      const cpu = generate('cpu');
      expect(cpu.code, cpu.err).toBe(0);
      expect(cpu.err).not.toContain('unavailable');
      const cuda = generate('cuda');
      expect(cuda.code, cuda.err).toBe(0);
      expect(cuda.err).toMatch(/execution provider 'cuda' is unavailable .*; using cpu/);
      expect(cuda.err).toContain('ONNXRUNTIME_NODE_INSTALL=cuda12');
      expect((JSON.parse(cuda.out) as { text: string }).text).toBe((JSON.parse(cpu.out) as { text: string }).text);
    },
    240_000,
  );

  it('a name that is no provider is refused, naming the flag and the choices', () => {
    const r = generate('tpu');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--provider: "tpu" is not one of cpu, webgpu, cuda');
  }, 60_000);
});
