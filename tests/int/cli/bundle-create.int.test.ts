// `pskills bundle create --from-hf` on a tiny random Qwen2 checkpoint (q/k/v bias, tied embeddings,
// a tokenizer built with the tokenizers library, saved with save_pretrained), then the bundle through
// the real engine: logits against transformers, `pskills compile` (a fresh hypernetwork: ΔW = 0), and
// generation with that adapter, token for token against transformers' greedy output.
// Needs training/.venv (the checkpoint, the oracle and the exporter are Python).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingPython } from '../../../main/training-venv';
import { loadBundle, type Bundle } from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import { withStudio } from '../api/transports';
import { SKILLS } from '../compile/fixture';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const hasVenv = existsSync(trainingPython());
const TOL = 1e-4;

interface Oracle {
  text: string;
  ids: number[];
  logits: number[][];
  messages: { role: 'user'; content: string }[];
  chat_ids: number[];
  generated_ids: number[];
  min_margin: number;
  finish: 'eos' | 'length';
}

let tmp: string;
let oracle: Oracle;
const pskills = (args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 240_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe.skipIf(!hasVenv)('pskills bundle create --from-hf (needs training/.venv)', () => {
  let bundle: Bundle;

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-from-hf-'));
    const made = spawnSync(
      trainingPython(),
      [
        'training/tests/hf_tiny.py',
        '--family',
        'qwen2',
        '--out',
        join(tmp, 'hf'),
        '--oracle',
        join(tmp, 'oracle.json'),
      ],
      { encoding: 'utf8', timeout: 240_000, env: { ...process.env, OMP_NUM_THREADS: '1' } },
    );
    expect(made.status, made.stderr).toBe(0);
    oracle = JSON.parse(readFileSync(join(tmp, 'oracle.json'), 'utf8')) as Oracle;
    const r = pskills([
      'bundle',
      'create',
      '--from-hf',
      join(tmp, 'hf'),
      '--out',
      join(tmp, 'bundle'),
      '--hypernet',
      'init',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/wrote .*bundle: qwen2, .* fp32, .* hypernet perceiver/);
  }, 480_000);
  afterAll(async () => {
    await bundle?.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('loads in the engine; tokenizer, chat template and logits equal transformers', async () => {
    bundle = await loadBundle(join(tmp, 'bundle'));
    expect(bundle.manifest.architecture).toMatchObject({ family: 'qwen2', qkv_bias: true, tie_embeddings: true });
    expect(bundle.tokenizer.encode(oracle.text)).toEqual(oracle.ids);
    const chat = bundle.chat.render(oracle.messages, { addGenerationPrompt: true });
    expect(bundle.tokenizer.encode(chat)).toEqual(oracle.chat_ids);
    const ids = oracle.ids;
    const { logits } = await bundle.lm.forward({
      batch: 1,
      inputIds: ids,
      positionIds: ids.map((_, i) => i),
      attentionMask: ids.map(() => 1),
      cache: KvCache.empty(bundle.manifest, 1),
      lora: bundle.lm.loraFeeds([null]),
    });
    const V = bundle.lm.vocab;
    let worst = 0;
    oracle.logits.forEach((row, pos) =>
      row.forEach((x, v) => (worst = Math.max(worst, Math.abs(x - logits[pos * V + v]!)))),
    );
    expect(worst).toBeLessThan(TOL);
  });

  it('compiles a skill with `pskills compile` and generates transformers’ greedy tokens with its adapter', async () => {
    expect(oracle.min_margin).toBeGreaterThan(1e-3); // no near-ties for greedy decoding to split on
    const dataDir = join(tmp, 'data');
    const src = join(tmp, 'skills', 'review-branch');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'SKILL.md'), SKILLS['review-branch']);
    expect(pskills(['import', join(tmp, 'skills'), '--data-dir', dataDir, '--json']).code).toBe(0);
    const c = pskills(['compile', 'review-branch', '--bundle', join(tmp, 'bundle'), '--data-dir', dataDir, '--json']);
    expect(c.code, c.err).toBe(0);
    const compiled = JSON.parse(c.out) as { rank: number; chunks: number; cached: boolean };
    // each chunk's adapter has the hypernetwork's rank (its read slots plus the shared ones)
    const hyperRank = (
      JSON.parse(readFileSync(join(tmp, 'bundle', 'bundle.json'), 'utf8')) as { hypernet: { rank: number } }
    ).hypernet.rank;
    expect(compiled).toMatchObject({ rank: hyperRank * compiled.chunks, cached: false });

    await withStudio(
      async ({ api }) => {
        const tokens: number[] = [];
        const r = await api.engine.generate(
          {
            messages: oracle.messages,
            maxTokens: 12,
            sampling: { temperature: 0 },
            adapter: { kind: 'skill', name: 'review-branch' },
          },
          (e) => tokens.push(e.tokenId),
        ).result;
        const eos = bundle.manifest.special_tokens.eos;
        const want = oracle.generated_ids.filter((t, i) => !(t === eos && i === oracle.generated_ids.length - 1));
        expect(r.adapter).toMatch(/^[0-9a-f]{12}$/);
        expect(tokens).toEqual(want);
        expect(r.finishReason).toBe(oracle.finish === 'eos' ? 'eos' : 'length');
      },
      { dataDir, defaultBundleDir: join(tmp, 'bundle') },
    );
  }, 300_000);
});

describe('pskills bundle create: arguments', () => {
  it('says what is wrong before starting Python', () => {
    const usage = pskills(['bundle', 'create', '--out', 'x']);
    expect(usage.code, usage.err).toBe(2);
    const empty = mkdtempSync(join(tmpdir(), 'pskills-from-hf-empty-'));
    try {
      const missing = pskills(['bundle', 'create', '--from-hf', empty, '--out', join(empty, 'b')]);
      expect(missing.code).not.toBe(0);
      expect(missing.err).toMatch(/--from-hf: .*config\.json: missing/);
      writeFileSync(join(empty, 'config.json'), '{}');
      const dtype = pskills(['bundle', 'create', '--from-hf', empty, '--out', join(empty, 'b'), '--dtype', 'bf16']);
      expect(dtype.err).toMatch(/--dtype: "bf16" is not one of fp32, fp16/);
      const targets = pskills([
        'bundle',
        'create',
        '--from-hf',
        empty,
        '--out',
        join(empty, 'b'),
        '--lora-targets',
        'q,x',
      ]);
      expect(targets.err).toMatch(/--lora-targets: "x" not among q,k,v,o,gate,up,down/);
      const out = ['bundle', 'create', '--from-hf', empty, '--out', join(empty, 'b'), '--train-step-buckets'];
      expect(pskills([...out, '4x64,8by2']).err).toMatch(/--train-step-buckets: "4x64,8by2" is not BATCHxLENGTH/);
      const huge = pskills([...out, '4x64,100000x100000']);
      expect(huge.code).toBe(2);
      expect(huge.err).toMatch(/--train-step-buckets: "100000x100000": at most 64 rows of 8192 tokens/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 300_000);
});
