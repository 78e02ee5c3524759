// GGUF LoRA as a user runs it (docs/guide.md "Back to llama.cpp, Ollama and LM Studio"): the tiny GGUF
// fixture (training/tests/gguf_tiny.py, here with one token per embedding row and F32 tensors, which llama.cpp
// needs to load it and to compute in float32 as the engine does), a bundle made from it, a seeded
// adapter imported as PEFT, then `pskills adapters export --format gguf|ollama` and `adapters import
// FILE.gguf`; and llama.cpp itself (node-llama-cpp's prebuilt binary) with the exported file gives the
// same greedy tokens as the engine, 16 tokens on 5 prompts, and the base's tokens at scale 0, on the
// Llama fixture (q/k rows in llama.cpp's order) and the Qwen2 one (not reordered).
// Skipped with the reason printed only where that binary cannot load. Needs training/.venv.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGgufLora } from '../../../main/adapters/gguf-lora-write';
import { writePeftDir } from '../../../main/adapters/peft-dir';
import type { Adapter } from '../../../main/adapters/types';
import { foldAdapter, generateAll, loadBundle, type Bundle } from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import { trainingPython } from '../../../main/training-venv';
import { FIXTURE_BUNDLE, fixtureAdapter } from './fixture';
import { greedy, loadLlamaCpp } from './llamacpp';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const hasVenv = existsSync(trainingPython());
const N = 16;
// 24 short prompts; the test takes the first 5 whose greedy paths have no near-tie (below).
const CANDIDATES = ['hello', 'the cat', 'a skill', 'numbers', 'why do', 'write a'].flatMap((w) =>
  ['world', 'sat on', 'is', '1 2 3'].map((x) => `${w} ${x}`),
);
/** Top-2 logit gap below which float32 summation order may pick either token (a tie, not a bug). */
const TIE = 0.01;

describe.skipIf(!hasVenv)('GGUF LoRA export/import and llama.cpp (needs training/.venv)', () => {
  let tmp: string;
  let dataDir: string;
  let gguf: string;
  let bundleDir: string;
  let adapter: Adapter;
  let id: string;
  const pskills = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  const env = { ...process.env, PYTHONPATH: join(process.cwd(), 'training', 'src') };
  /** The fixture GGUF (`variant`, one token per row, F32) and a bundle made from it. */
  const makeBundle = (variant: string, file: string, out: string) => {
    const made = spawnSync(
      trainingPython(),
      ['training/tests/gguf_tiny.py', '--variant', variant, '--out', file, '--full-vocab', '--f32'],
      { encoding: 'utf8', timeout: 120_000, env },
    );
    expect(made.status, made.stderr).toBe(0);
    const args = ['-m', 'pskills_train.export.from_gguf', file, '--out', out, '--train-step-buckets', 'none'];
    const built = spawnSync(trainingPython(), args, { encoding: 'utf8', timeout: 300_000, env });
    expect(built.status, built.stderr).toBe(0);
  };
  const importPeft = (bundle: string): string => {
    const r = pskills('adapters', 'import', join(tmp, 'peft'), '--bundle', bundle, '--json');
    expect(r.code, r.err).toBe(0);
    return (JSON.parse(r.out) as { adapter: string }).adapter;
  };

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-gguf-lora-'));
    dataDir = join(tmp, 'data');
    const models = join(tmp, 'my "models" dir'); // the Modelfile's FROM must survive spaces and quotes
    mkdirSync(models);
    gguf = join(models, 'tiny.gguf');
    bundleDir = join(tmp, 'tiny');
    makeBundle('llama', gguf, bundleDir);
    // A seeded adapter large enough to change the random model's greedy tokens.
    adapter = fixtureAdapter(7, { scale: 0.3 });
    await writePeftDir(join(tmp, 'peft'), adapter, {});
    id = importPeft(bundleDir);
  }, 600_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('exports a llama.cpp LoRA that imports back to the same adapter (f32 exact); f16 too', () => {
    const file = join(tmp, 'out', 'skill.gguf');
    const r = pskills('adapters', 'export', id, '--format', 'gguf', '--out', file, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ dir: join(tmp, 'out'), files: ['skill.gguf'] });
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 4).toString()).toBe('GGUF');
    for (const k of [
      'general.type',
      'adapter',
      'adapter.type',
      'lora',
      'adapter.lora.alpha',
      'blk.1.ffn_down.weight.lora_b',
    ])
      expect(bytes.includes(k)).toBe(true);
    // The same tensors: the library finds the adapter it already holds (keyed by the tensors' sha256).
    const back = pskills('adapters', 'import', file, '--bundle', bundleDir, '--json');
    expect(back.code, back.err).toBe(0);
    expect(JSON.parse(back.out)).toMatchObject({ adapter: id, rank: 4, created: false });
    expect(pskills('adapters', 'export', id, '--format', 'gguf', '--out', file).err).toMatch(/exists; not overwritten/);
    const half = join(tmp, 'out', 'skill-f16.gguf');
    expect(pskills('adapters', 'export', id, '--format', 'gguf', '--dtype', 'f16', '--out', half).code).toBe(0);
    expect(readFileSync(half).length).toBeLessThan(bytes.length * 0.6);
    const imported = pskills('adapters', 'import', half, '--bundle', bundleDir, '--json');
    expect(JSON.parse(imported.out)).toMatchObject({ rank: 4, created: true }); // rounded to float16: another adapter
  });

  it('writes an Ollama folder: adapter, Modelfile with FROM the GGUF the bundle came from, template and stops', () => {
    const dir = join(tmp, 'ollama export');
    const r = pskills('adapters', 'export', id, '--format', 'ollama', '--out', dir, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).files).toEqual(['adapter.gguf', 'Modelfile', 'pskills.json']);
    const text = readFileSync(join(dir, 'Modelfile'), 'utf8');
    expect(text).toContain(`\nFROM ${gguf}\n`); // spaces and quotes need no quoting in Ollama's parser
    expect(text).toContain('\nADAPTER ./adapter.gguf\n');
    expect(text).toMatch(/\nTEMPLATE """\{\{- range \.Messages \}\}<\|im_start\|>/);
    expect(text).toContain('\nPARAMETER stop <|im_end|>\n');
  });

  it('refuses the default kind of bundle, a model GGUF and a LoRA for another base, by name', () => {
    const r = pskills('adapters', 'import', join(tmp, 'peft'), '--bundle', FIXTURE_BUNDLE, '--json');
    expect(r.code, r.err).toBe(0);
    const other = (JSON.parse(r.out) as { adapter: string }).adapter;
    const no = pskills('adapters', 'export', other, '--format', 'gguf', '--out', join(tmp, 'no.gguf'));
    expect(no.code).toBe(2);
    expect(no.err).toMatch(/randomly initialised test model: no GGUF file of that base exists for llama\.cpp/);
    expect(existsSync(join(tmp, 'no.gguf'))).toBe(false);
    const model = pskills('adapters', 'import', gguf, '--bundle', bundleDir);
    expect(model.err).toMatch(/tiny\.gguf: not a LoRA adapter \(general\.type/);
    const qwen = join(tmp, 'qwen.gguf');
    writeFileSync(qwen, encodeGgufLora(adapter, { arch: 'qwen2', heads: 4, kvHeads: 2 }));
    expect(pskills('adapters', 'import', qwen, '--bundle', bundleDir).err).toMatch(
      /qwen\.gguf: a LoRA for a qwen2 model \(general\.architecture\); the current bundle's base is llama/,
    );
  });

  it.for(['llama', 'qwen2'])(
    'llama.cpp with the exported adapter gives the engine’s greedy tokens; at scale 0, the base’s (%s)',
    { timeout: 300_000 },
    async (variant, ctx) => {
      let [model, dir, adapterId] = [gguf, bundleDir, id];
      if (variant !== 'llama') {
        [model, dir] = [join(tmp, `${variant}.gguf`), join(tmp, variant)];
        makeBundle(variant, model, dir);
        adapterId = importPeft(dir);
      }
      const cpp = await loadLlamaCpp(model);
      if ('why' in cpp) {
        console.log(`[skip] llama.cpp check: ${cpp.why}`);
        ctx.skip();
        return;
      }
      const file = join(tmp, `llamacpp-${variant}.gguf`);
      const exported = pskills('adapters', 'export', adapterId, '--format', 'gguf', '--out', file);
      expect(exported.code, exported.err).toBe(0);
      const bundle = await loadBundle(dir);
      try {
        const folded = foldAdapter(adapter);
        const run = async (a: typeof folded | null, prompts: number[][]) =>
          (
            await generateAll(
              bundle,
              prompts.map((prompt) => ({ prompt, adapter: a, maxNewTokens: N, stopTokenIds: [] })),
            )
          ).map((r) => [...r.tokens]);
        // Prompts whose greedy paths (with and without the adapter) have no near-tie in the engine's logits.
        const all = CANDIDATES.map((t) => bundle.tokenizer.encode(t));
        const [base, lora] = [await run(null, all), await run(folded, all)];
        const clear = [];
        for (const [i, p] of all.entries())
          if ((await minGap(bundle, p, base[i]!, null)) > TIE && (await minGap(bundle, p, lora[i]!, folded)) > TIE)
            clear.push(i);
        console.log(`${clear.length} of ${all.length} prompts have no top-2 logit gap under ${TIE} on either path`);
        expect(clear.length, 'prompts without near-ties').toBeGreaterThanOrEqual(5);
        const chosen = clear.slice(0, 5);
        let same = 0;
        let sameBase = 0;
        let sameZero = 0;
        let moved = 0;
        for (const i of chosen) {
          const l = await greedy(cpp, all[i]!, N, { filePath: file, scale: 1 });
          const b = await greedy(cpp, all[i]!, N);
          const z = await greedy(cpp, all[i]!, N, { filePath: file, scale: 0 });
          same += l.filter((t, j) => t === lora[i]![j]).length;
          sameBase += b.filter((t, j) => t === base[i]![j]).length;
          sameZero += z.filter((t, j) => t === base[i]![j]).length;
          moved += lora[i]!.filter((t, j) => t !== base[i]![j]).length;
        }
        console.log(
          `${variant}: llama.cpp vs engine, ${chosen.length} prompts × ${N} tokens: adapter ${same}, base ${sameBase}, scale 0 ${sameZero} ` +
            `of ${chosen.length * N} agree; the adapter changed ${moved} of the engine's tokens`,
        );
        expect(moved).toBeGreaterThan(0); // else the comparison would not test the adapter
        expect({ same, sameBase, sameZero }).toEqual({ same: 5 * N, sameBase: 5 * N, sameZero: 5 * N });
      } finally {
        await bundle.dispose();
        await cpp.model.dispose();
      }
    },
  );
});

/** The smallest top-2 logit gap along a greedy path (prompt then the tokens it produced). */
async function minGap(
  bundle: Bundle,
  prompt: number[],
  tokens: number[],
  adapter: ReturnType<typeof foldAdapter> | null,
): Promise<number> {
  const ids = [...prompt, ...tokens.slice(0, -1)];
  const out = await bundle.lm.forward({
    batch: 1,
    inputIds: ids,
    positionIds: ids.map((_, i) => i),
    attentionMask: ids.map(() => 1),
    cache: KvCache.empty(bundle.manifest, 1),
    lora: bundle.lm.loraFeeds([adapter]),
    logitsToKeep: tokens.length,
  });
  const v = bundle.lm.vocab;
  const rows = out.logits.length / v;
  let gap = Infinity;
  for (let r = rows - tokens.length; r < rows; r++) {
    let a = -Infinity;
    let b = -Infinity;
    for (let i = r * v; i < (r + 1) * v; i++) {
      const x = out.logits[i]!;
      if (x > a) [a, b] = [x, a];
      else if (x > b) b = x;
    }
    gap = Math.min(gap, a - b);
  }
  return gap;
}
