// bench/compile: what compiling a skill costs and what it buys, side by side in one process (runs
// interleaved, medians reported):
//   - compile latency of a ~2,000-token skill (tokenize, every encoder chunk through encoder.onnx, the
//     hypernetwork, the mean combine) vs the in-context prefill of the same skill tokens (target ≤ 0.6×),
//     and the same compile through lm.onnx's hidden_states (bundles without encoder.onnx) for reference;
//   - time to first token for a 64-token question: instant (the compiled adapter, question only)
//     vs in-context (skill in the system prompt + question) (target ≤ 0.5×);
//   - hypernetwork size (parameters, hypernet.onnx bytes) and peak RSS.
// The skill is capped to what fits the bundle's context beside the question (the fixture has 256 positions).
// Run: node --import tsx bench/compile.ts [--bundle DIR | --random] [--tokens N] [--reps N]
//   --random: a random bundle of the bench-10m shape with a random hypernetwork of the default
//   config's shape (bench/random-hyper-bundle.py, written once into .cache/bench-hyper-10m).
import { spawnSync } from 'node:child_process';
import { statSync, mkdirSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  Bundle as BundleClass,
  compileSkill,
  generate,
  loadBundle,
  requireHypernet,
  type Bundle,
  type EngineAdapter,
  type GenerateRequest,
} from '../main/engine';
import { KvCache } from '../main/engine/kv-cache';
import { defaultThreads } from '../main/engine/ort';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

const { values } = parseArgs({
  options: {
    bundle: { type: 'string' },
    random: { type: 'boolean', default: false },
    tokens: { type: 'string', default: '2000' },
    reps: { type: 'string', default: '7' },
  },
});
const RANDOM_BUNDLE = join(APP_ROOT, '.cache/bench-hyper-10m');
const BUNDLE = values.random ? RANDOM_BUNDLE : values.bundle ? resolve(values.bundle) : DEFAULT_BUNDLE_DIR;
const SKILL_TOKENS = Number(values.tokens);
const QUESTION_TOKENS = 64;
const REPS = Number(values.reps);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const SECTIONS = [
  '## When to use\nUse this skill when a pull request changes a database schema, when a migration must run on a live table, or when a reviewer asks whether a change can lose data.',
  '## Steps\n1. Read the migration and list every table it touches.\n2. For each statement, say which lock it takes and for how long.\n3. Check that every new column has a default that does not rewrite the table.\n4. Run the migration on a copy of production data and time it.',
  '## Examples\n- Adding a nullable column is cheap; adding a column with a volatile default rewrites the table.\n- Creating an index without CONCURRENTLY blocks writes until it finishes.',
  '## Pitfalls\nNever drop a column in the same release that stops writing it. Do not rename a table that old code still reads. Split long backfills into batches and commit between them.',
  '## Constraints\nThe review must name the lock level, the expected duration and the rollback plan for every statement.',
];

/** A SKILL.md of exactly `tokens` tokens (sections repeated, cut at a token boundary). */
function skillText(b: Bundle, tokens: number): string {
  let text =
    '---\nname: migration-review\ndescription: Review SQL migrations for locking and data loss.\n---\n\n# Migration review\n\n';
  for (let i = 0; b.tokenizer.encode(text).length < tokens; i++) text += `${SECTIONS[i % SECTIONS.length]}\n\n`;
  return b.tokenizer.decode(b.tokenizer.encode(text).slice(0, tokens)).replace(/\uFFFD+$/u, '');
}

function question(b: Bundle): string {
  const q =
    'I am about to add a NOT NULL column with a default to the orders table, which has two hundred million rows and takes writes all day. What should I check first, which lock will it take, and how do I roll it back if it runs too long? '.repeat(
      4,
    );
  return b.tokenizer.decode(b.tokenizer.encode(q).slice(0, QUESTION_TOKENS)).trim();
}

async function interleaved<K extends string>(
  variants: Record<K, () => Promise<number>>,
  reps = REPS,
): Promise<Record<K, number>> {
  const keys = Object.keys(variants) as K[];
  const runs = new Map<K, number[]>(keys.map((k) => [k, []]));
  for (const k of keys) await variants[k](); // warm-up
  for (let i = 0; i < reps; i++) for (const k of keys) runs.get(k)!.push(await variants[k]());
  return Object.fromEntries(keys.map((k) => [k, median(runs.get(k)!)])) as Record<K, number>;
}

async function ttft(b: Bundle, request: GenerateRequest): Promise<number> {
  const t0 = performance.now();
  for await (const _ of generate(b, { ...request, maxNewTokens: 1, stopTokenIds: [] })) return performance.now() - t0;
  return performance.now() - t0;
}

function ensureRandomBundle(): void {
  if (existsSync(join(RANDOM_BUNDLE, 'bundle.json'))) return;
  const python = join(APP_ROOT, 'training/.venv/bin/python');
  if (!existsSync(python))
    throw new Error(`--random needs the training venv (${python}); run \`bash training/setup_venv.sh\``);
  const r = spawnSync(python, [join(APP_ROOT, 'bench/random-hyper-bundle.py'), RANDOM_BUNDLE], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('bench/random-hyper-bundle.py failed');
}

async function main() {
  if (values.random) ensureRandomBundle();
  if (!existsSync(join(BUNDLE, 'bundle.json')))
    throw new Error(
      `no bundle at ${BUNDLE}${values.bundle ? '' : ' (the default bundle); pass --bundle DIR or --random'}`,
    );
  const loadAvg = loadavg()[0]!;
  const maxRss = () => process.resourceUsage().maxRSS / 1024;
  const b = await loadBundle(BUNDLE);
  const rssLoaded = maxRss();
  requireHypernet(b); // a clear error for a bundle without hypernet.onnx
  const m = b.manifest;
  const q = question(b);
  const qPrompt = b.chat.render([{ role: 'user', content: q }]);
  // The in-context prompt must fit: cap the skill at the context minus the question and the template.
  const overhead = b.tokenizer.encode(
    b.chat.render([
      { role: 'system', content: '' },
      { role: 'user', content: q },
    ]),
  ).length;
  const tokens = Math.min(SKILL_TOKENS, m.architecture.max_positions - overhead - 2);
  const skill = skillText(b, tokens);
  const skillIds = b.tokenizer.encode(skill);
  const icPrompt = b.chat.render([
    { role: 'system', content: skill },
    { role: 'user', content: q },
  ]);

  const compiled = await compileSkill(b, skill);
  const adapter: EngineAdapter = compiled.engine;
  for (let i = 0; i < 2; i++) await compileSkill(b, skill);
  const rssCompiled = maxRss(); // peak with compiles only: before any long in-context prefill

  const prefill = async () => {
    const t = performance.now();
    await b.lm.forward({
      batch: 1,
      inputIds: skillIds,
      positionIds: skillIds.map((_, i) => i),
      attentionMask: skillIds.map(() => 1),
      cache: KvCache.empty(m, 1),
      lora: b.lm.loraFeeds([null]),
    });
    return performance.now() - t;
  };
  // Compile broken down: the encoder runs and the hypernetwork runs of the same compiles. compile_lm is
  // the same bundle with encoder.onnx left out (the path of bundles without one).
  const lmOnly = new BundleClass(b.dir, m, b.lm, b.tokenizer, b.chat, b.loadMs, b.hypernet, null);
  const parts = { encoder: [] as number[], hypernet: [] as number[], lmEncoder: [] as number[] };
  const t = await interleaved({
    compile: async () => {
      const c = await compileSkill(b, skill);
      parts.encoder.push(c.encoderMs);
      parts.hypernet.push(c.hypernetMs);
      return c.ms;
    },
    compile_lm: async () => {
      const c = await compileSkill(lmOnly, skill);
      parts.lmEncoder.push(c.encoderMs);
      return c.ms;
    },
    prefill,
  });
  const h = { encoder: median(parts.encoder), hypernet: median(parts.hypernet), lmEncoder: median(parts.lmEncoder) };
  const TARGET = 0.6;
  const ft = await interleaved(
    {
      instant: () => ttft(b, { prompt: qPrompt, adapter }),
      in_context: () => ttft(b, { prompt: icPrompt }),
      none: () => ttft(b, { prompt: qPrompt }),
    },
    3 * REPS,
  );
  const compileRatio = t.compile / t.prefill;
  const compileLmRatio = t.compile_lm / t.prefill;
  const ttftRatio = ft.instant / ft.in_context;
  const hyperBytes = statSync(join(BUNDLE, m.hypernet!.file)).size;
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  await b.dispose();

  const rows: [string, string][] = [
    ['bundle', `${m.id} (${BUNDLE})`],
    [
      'skill tokens (chunks × budget/overlap)',
      `${skillIds.length}${skillIds.length < SKILL_TOKENS ? ` (capped from ${SKILL_TOKENS} by max_positions ${m.architecture.max_positions})` : ''} → ${compiled.chunks.length} chunks × ${m.encoder.token_budget}/${m.encoder.chunk_overlap}, rank ${compiled.rank}`,
    ],
    [`compile ms through ${compiled.encoderFile} (tokenize + encoder + hypernet + combine)`, t.compile.toFixed(1)],
    ['  encoder forwards ms / hypernet runs ms', `${h.encoder.toFixed(1)} / ${h.hypernet.toFixed(1)}`],
    ['compile ms through lm.onnx (encoder forwards ms)', `${t.compile_lm.toFixed(1)} (${h.lmEncoder.toFixed(1)})`],
    ['in-context prefill ms of the same tokens', t.prefill.toFixed(1)],
    [
      `compile / prefill (target ≤ ${TARGET}×)`,
      `${compileRatio.toFixed(2)}× ${compileRatio <= TARGET ? 'met' : 'NOT met'} (through lm.onnx: ${compileLmRatio.toFixed(2)}×)`,
    ],
    [
      `TTFT ms, ${QUESTION_TOKENS}-token question: instant / in-context / none`,
      `${ft.instant.toFixed(1)} / ${ft.in_context.toFixed(1)} / ${ft.none.toFixed(1)}`,
    ],
    ['TTFT instant / in-context (target ≤ 0.5×)', `${ttftRatio.toFixed(2)}× ${ttftRatio <= 0.5 ? 'met' : 'NOT met'}`],
    ['hypernetwork params / hypernet.onnx MiB', `${m.hypernet!.params} / ${(hyperBytes / 2 ** 20).toFixed(2)}`],
    [
      'peak RSS MiB: loaded / + compiling / whole run (in-context prefills)',
      `${rssLoaded.toFixed(0)} / ${rssCompiled.toFixed(0)} / ${peakRssMiB.toFixed(0)}`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
  const machine = `${cpus().length}× ${cpus()[0]?.model ?? '?'}, node ${process.version}, intraOpNumThreads ${defaultThreads() ?? 'ORT default'}, load average ${loadAvg.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`;
  console.log(`machine: ${machine}`);

  const results = {
    bundle: {
      id: m.id,
      dir: BUNDLE,
      hypernet_kind: m.hypernet!.kind,
      rank: m.hypernet!.rank,
      token_budget: m.encoder.token_budget,
      chunk_overlap: m.encoder.chunk_overlap,
      max_positions: m.architecture.max_positions,
    },
    skill_tokens: skillIds.length,
    skill_tokens_requested: SKILL_TOKENS,
    question_tokens: b.tokenizer.encode(q).length,
    chunks: compiled.chunks.length,
    adapter_rank: compiled.rank,
    compile_encoder_file: compiled.encoderFile,
    compile_ms: t.compile,
    compile_encoder_ms: h.encoder,
    compile_hypernet_ms: h.hypernet,
    compile_through_lm_ms: t.compile_lm,
    compile_through_lm_encoder_ms: h.lmEncoder,
    prefill_ms: t.prefill,
    compile_vs_prefill: compileRatio,
    compile_through_lm_vs_prefill: compileLmRatio,
    compile_target: TARGET,
    compile_target_met: compileRatio <= TARGET,
    ttft_ms: ft,
    ttft_instant_vs_in_context: ttftRatio,
    ttft_target_met: ttftRatio <= 0.5,
    hypernet_params: m.hypernet!.params,
    hypernet_onnx_bytes: hyperBytes,
    peak_rss_mib: peakRssMiB,
    peak_rss_mib_loaded: rssLoaded,
    peak_rss_mib_compiling: rssCompiled,
  };
  const out = join(APP_ROOT, 'bench/results/compile.json');
  mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
  const json = {
    bench: 'compile',
    date: new Date().toISOString(),
    machine,
    // The 2-core machine is shared (training jobs); the load average says how busy it was.
    load_average: { start: loadAvg, end: loadavg()[0]! },
    cores: availableParallelism(),
    settings: { reps: REPS, question_tokens: QUESTION_TOKENS },
    results,
  };
  writeFileSync(`${out}.tmp`, JSON.stringify(json, null, 2) + '\n');
  renameSync(`${out}.tmp`, out);
  console.log(`wrote ${out}`);
}

await main();
