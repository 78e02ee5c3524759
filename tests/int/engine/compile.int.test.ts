// main/engine/compile.ts against the PyTorch oracle of tests/fixtures/bundle-hyper
// (training/scripts/make_fixture_hyper.py): chunk spans, encoder states and the compiled adapter.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkSpans, compileSkill, loadBundle, type Bundle } from '../../../main/engine';
import { APP_ROOT } from '../../../main/paths';
import { copyFixture, FIXTURE_DIR } from './fixture';

export const HYPER_DIR = join(APP_ROOT, 'tests/fixtures/bundle-hyper');

interface HyperOracle {
  tolerance: number;
  token_budget: number;
  chunk_overlap: number;
  rank: number;
  chunk_cases: { n: number; token_budget: number; chunk_overlap: number; chunks: [number, number][] }[];
  skills: {
    name: string;
    text: string;
    ids: number[];
    chunks: [number, number][];
    chunk_last_state: number[][];
    rank: number;
    adapter: Record<string, { A_shape: number[]; A: number[]; B_shape: number[]; B: number[] }>;
  }[];
}

const oracle: HyperOracle = JSON.parse(readFileSync(join(HYPER_DIR, 'oracle.json'), 'utf8'));

/** max |a − b| / max |b|: the relative error of a whole tensor. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) {
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
    scale = Math.max(scale, Math.abs(b[i]!));
  }
  return scale === 0 ? diff : diff / scale;
}

describe('compile parity with pskills_train.hyper.compile', () => {
  let bundle: Bundle;
  beforeAll(async () => {
    bundle = await loadBundle(HYPER_DIR);
  });
  afterAll(async () => {
    await bundle.dispose();
  });

  it('loads the hypernetwork and checks its I/O', () => {
    expect(bundle.hypernet).not.toBeNull();
    expect(bundle.hypernet!.rank).toBe(oracle.rank);
    expect(bundle.manifest.encoder.token_budget).toBe(oracle.token_budget);
  });

  it('chunks as Python does', () => {
    for (const c of oracle.chunk_cases)
      expect(chunkSpans(c.n, c.token_budget, c.chunk_overlap), JSON.stringify(c)).toEqual(c.chunks);
    for (const s of oracle.skills) {
      expect(bundle.tokenizer.encode(s.text)).toEqual(s.ids);
      expect(chunkSpans(s.ids.length, oracle.token_budget, oracle.chunk_overlap)).toEqual(s.chunks);
    }
  });

  it('encodes each chunk to the same hidden states', async () => {
    const d = bundle.manifest.architecture.hidden;
    for (const s of oracle.skills) {
      for (const [c, [start, end]] of s.chunks.entries()) {
        const states = await bundle.lm.encode(s.ids.slice(start, end));
        expect(states.length).toBe((end - start) * d);
        expect(relErr(states.subarray(states.length - d), s.chunk_last_state[c]!)).toBeLessThan(oracle.tolerance);
      }
    }
  });

  it.each(oracle.skills.map((s) => [s.name, s] as const))(
    'compiles %s to the oracle adapter (relative error < 1e-4)',
    async (_name, s) => {
      const progress: number[] = [];
      const out = await compileSkill(bundle, s.text, { onProgress: (p) => progress.push(p.chunk) });
      expect(out.rank).toBe(s.rank);
      expect(out.adapter.alpha).toBe(s.rank);
      expect(out.chunks).toEqual(s.chunks);
      expect(progress).toEqual(Array.from({ length: s.chunks.length + 1 }, (_, i) => i));
      expect([...out.engine.targets.keys()].sort()).toEqual(Object.keys(s.adapter).sort());
      let worst = 0;
      for (const [key, want] of Object.entries(s.adapter)) {
        const got = out.engine.targets.get(key as `${number}.${string}`)!;
        expect([got.dIn, s.rank]).toEqual(want.A_shape);
        expect([s.rank, got.dOut]).toEqual(want.B_shape);
        worst = Math.max(worst, relErr(got.A, want.A), relErr(got.B, want.B));
      }
      expect(worst).toBeLessThan(oracle.tolerance);
    },
  );

  it('reads CRLF and CR line endings as LF, as the training corpus stores them', async () => {
    const text = oracle.skills[0]!.text;
    const crlf = await compileSkill(bundle, text.replace(/\n/g, '\r\n'));
    const lf = await compileSkill(bundle, text);
    expect(crlf.chunks).toEqual(lf.chunks);
    for (const [key, pair] of lf.engine.targets) expect(crlf.engine.targets.get(key)!.A).toEqual(pair.A);
  });

  it('is cancellable between chunks', async () => {
    const controller = new AbortController();
    const long = oracle.skills.find((s) => s.chunks.length > 2)!;
    const run = compileSkill(bundle, long.text, {
      signal: controller.signal,
      onProgress: (p) => p.chunk === 1 && controller.abort(),
    });
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('refuses empty text and bundles without a hypernetwork, naming the bundle', async () => {
    await expect(compileSkill(bundle, '')).rejects.toThrow(/empty skill/);
    const base = await loadBundle(FIXTURE_DIR);
    try {
      expect(base.hypernet).toBeNull();
      await expect(compileSkill(base, 'x')).rejects.toThrow(/bundle tiny-random \(.*bundle-tiny\) has no hypernetwork/);
    } finally {
      await base.dispose();
    }
  });
});

describe('hypernet.onnx is checked against bundle.json', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bundle.json edited as plain JSON
  const broken = (edit: (m: any) => void) => {
    const dir = copyFixture();
    // copyFixture copies bundle-tiny; put the hyper fixture's files in instead
    for (const f of ['bundle.json', 'hypernet.onnx', 'lm.onnx', 'tokenizer.json', 'tokenizer_config.json'])
      writeFileSync(join(dir, f), readFileSync(join(HYPER_DIR, f)));
    const m = JSON.parse(readFileSync(join(dir, 'bundle.json'), 'utf8'));
    edit(m);
    writeFileSync(join(dir, 'bundle.json'), JSON.stringify(m));
    return loadBundle(dir, { verifyHashes: false });
  };

  it("a rank that is not the graph's", async () => {
    await expect(broken((m) => ((m.hypernet.rank = 3), (m.lora.default_rank = 3)))).rejects.toThrow(
      /hypernet\.onnx does not match bundle\.json: output 'A\.q' dimension 2 is 2, bundle\.json says 3/,
    );
  });

  it('a manifest whose hypernet fields disagree with the rest', async () => {
    await expect(broken((m) => (m.hypernet.rank = 3))).rejects.toThrow(
      /hypernet\.rank: 3, but lora\.default_rank is 2/,
    );
    await expect(broken((m) => (m.hypernet.d_enc = 32))).rejects.toThrow(
      /hypernet\.d_enc: 32, but architecture\.hidden is 64/,
    );
    await expect(broken((m) => (m.hypernet.outputs = ['A.{module}']))).rejects.toThrow(/hypernet\.outputs: /);
    await expect(broken((m) => delete m.files['hypernet.onnx'])).rejects.toThrow(
      /hypernet\.file: hypernet\.onnx is not listed in files/,
    );
    await expect(broken((m) => (m.encoder.chunk_overlap = 16))).rejects.toThrow(
      /encoder\.chunk_overlap: 16 must be smaller than token_budget 16/,
    );
  });

  it('a graph with fewer targets than bundle.json', async () => {
    // The lm graph stands in for hypernet.onnx: wrong names entirely.
    await expect(broken((m) => (m.hypernet.file = 'lm.onnx'))).rejects.toThrow(
      /lm\.onnx does not match bundle\.json: unexpected input 'input_ids'/,
    );
  });
});
