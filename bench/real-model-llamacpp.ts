// The llama.cpp half of `npm run check:real-model`: a skill distilled in the studio, exported as a GGUF LoRA
// (the writer behind `pskills adapters export --format gguf`) and loaded by llama.cpp (node-llama-cpp's
// prebuilt CPU binary) on the very GGUF the bundle was made from. On the skill's held-out questions: the
// greedy tokens at temperature 0 against the engine's with the same adapter (the first AGREE_TOKENS,
// no stop token; also teacher-forced: llama.cpp's top token after each of the engine's), and llama.cpp's NLL of
// the teacher's answers with and without the adapter beside the engine's. Two files: the GGUF's float32 twin
// (bench/gguf_dequantized.py: the bundle's very weights, so the targets are on it) and the Q4_1 file itself,
// whose 8-bit activations part near-tied greedy tokens even with no adapter (reported, no target).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeGgufLoraFile } from '../main/adapters/gguf-lora-file';
import { ggufBaseOf } from '../main/adapters/gguf-lora-names';
import { generateAll, type Bundle, type EngineAdapter } from '../main/engine';
import { greedy, loadLlamaCpp, scoreAnswer, type LlamaCpp } from '../tests/int/adapters/llamacpp';

export const AGREE_TOKENS = 16;
const THREADS = 1;
export const TARGET = { tokenAgreement: 0.9, shiftGap: 0.05 };

/** One held-out question: the student's prompt (no skill in it), the teacher's answer, the engine's NLLs. */
export interface HeldOut {
  prompt: number[];
  answer: number[];
  ours: { none: number; adapter: number };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

export async function openLlamaCpp(gguf: string): Promise<LlamaCpp> {
  const cpp = await loadLlamaCpp(gguf);
  if ('why' in cpp) throw new Error(`llama.cpp check: ${cpp.why}`);
  return cpp;
}

/** llama.cpp against the engine on one distilled skill (see the header). */
export async function llamaCppSkill(bundle: Bundle, cpp: LlamaCpp, adapter: EngineAdapter, held: HeldOut[]) {
  const base = ggufBaseOf(bundle.manifest);
  if (typeof base === 'string') throw new Error(`llama.cpp check: ${base}`);
  const dir = mkdtempSync(join(tmpdir(), 'real-model-lora-'));
  try {
    const filePath = join(dir, 'skill.gguf');
    const alpha = adapter.rank * (adapter.scale ?? 1); // the engine's B·A·scale is the file's B·A·α/r
    await writeGgufLoraFile(filePath, { rank: adapter.rank, alpha, targets: adapter.targets }, base, { dtype: 'f32' });
    const lora = { filePath, scale: 1 };
    let same = 0;
    let forced = 0;
    const firstDiff: number[] = [];
    const cppNll = { none: [] as number[], adapter: [] as number[] };
    let sameBase = 0;
    for (const h of held) {
      const [base0] = await generateAll(bundle, [
        { prompt: h.prompt, maxNewTokens: AGREE_TOKENS, stopTokenIds: [], adapter: null },
      ]);
      const theirs0 = await greedy(cpp, h.prompt, AGREE_TOKENS, undefined, THREADS);
      sameBase += base0!.tokens.filter((t, j) => t === theirs0[j]).length;
      const [ours] = await generateAll(bundle, [
        { prompt: h.prompt, maxNewTokens: AGREE_TOKENS, stopTokenIds: [], adapter },
      ]);
      const theirs = await greedy(cpp, h.prompt, AGREE_TOKENS, lora, THREADS);
      const mine = [...ours!.tokens];
      same += mine.filter((t, j) => t === theirs[j]).length;
      const d = mine.findIndex((t, j) => t !== theirs[j]);
      firstDiff.push(d < 0 ? AGREE_TOKENS : d);
      forced += (await scoreAnswer(cpp, h.prompt, mine, lora, THREADS)).top.filter((t, j) => t === mine[j]).length;
      cppNll.none.push(mean((await scoreAnswer(cpp, h.prompt, h.answer, undefined, THREADS)).nll));
      cppNll.adapter.push(mean((await scoreAnswer(cpp, h.prompt, h.answer, lora, THREADS)).nll));
    }
    const nll = { none: mean(cppNll.none), adapter: mean(cppNll.adapter) };
    const ours = { none: mean(held.map((h) => h.ours.none)), adapter: mean(held.map((h) => h.ours.adapter)) };
    return {
      questions: held.length,
      token_agreement: round(same / (held.length * AGREE_TOKENS)),
      first_difference_at: firstDiff,
      token_agreement_no_adapter: round(sameBase / (held.length * AGREE_TOKENS)),
      // the engine's tokens fed to llama.cpp: how often its own top token is the engine's (no cascade)
      token_agreement_forced: round(forced / (held.length * AGREE_TOKENS)),
      nll_none: round(nll.none),
      nll_adapter: round(nll.adapter),
      studio_nll_none: round(ours.none),
      studio_nll_adapter: round(ours.adapter),
      shift: round(nll.adapter - nll.none),
      studio_shift: round(ours.adapter - ours.none),
      shift_gap: round(Math.abs(nll.adapter - nll.none - (ours.adapter - ours.none))),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type LlamaCppSkill = Awaited<ReturnType<typeof llamaCppSkill>> & { skill: string };

/** bench/results/real-model.json `llamacpp`: the skills pooled (tokens and questions weighted alike). */
export function llamaCppSummary(gguf: string, skills: LlamaCppSkill[]) {
  const q = skills.reduce((a, s) => a + s.questions, 0);
  type Pooled = 'nll_none' | 'nll_adapter' | 'studio_nll_none' | 'studio_nll_adapter' | 'token_agreement';
  const w = (k: Pooled | 'token_agreement_forced' | 'token_agreement_no_adapter') =>
    round(skills.reduce((a, s) => a + s[k] * s.questions, 0) / q);
  const summary = {
    token_agreement: w('token_agreement'),
    token_agreement_forced: w('token_agreement_forced'),
    nll_none: w('nll_none'),
    nll_adapter: w('nll_adapter'),
    studio_nll_none: w('studio_nll_none'),
    studio_nll_adapter: w('studio_nll_adapter'),
  };
  const gaps = skills.map((s) => s.shift_gap);
  return {
    runtime: 'node-llama-cpp 3.21.1 prebuilt CPU binary, 1 thread, temperature 0',
    model: gguf.split('/').at(-1),
    adapter: 'the distilled adapter as an f32 GGUF LoRA (pskills adapters export --format gguf)',
    tokens: AGREE_TOKENS,
    questions: q,
    token_agreement_no_adapter: w('token_agreement_no_adapter'),
    ...summary,
    shift: round(summary.nll_adapter - summary.nll_none),
    studio_shift: round(summary.studio_nll_adapter - summary.studio_nll_none),
    max_shift_gap: Math.max(...gaps),
    targets: {
      token_agreement: `>= ${TARGET.tokenAgreement}`,
      shift_gap: `<= ${TARGET.shiftGap} nats, per skill`,
      met: summary.token_agreement >= TARGET.tokenAgreement && gaps.every((g) => g <= TARGET.shiftGap),
    },
    skills,
  };
}

export type LlamaCppSummary = ReturnType<typeof llamaCppSummary> & {
  /** The same on the quantized file the bundle was made from (no target: see the header). */
  quantized?: Omit<ReturnType<typeof llamaCppSummary>, 'targets'>;
  measured?: string;
  loadavg?: number[];
  /** 'llamacpp-only': a run of its own (the skills distilled again), not the one of the NLL table beside it. */
  run?: string;
};

/** The docs/results.md lines for the llama.cpp check. */
export function llamaCppLines(l: LlamaCppSummary): string[] {
  const met = (ok: boolean) => (ok ? 'met' : '**missed**');
  const rows = l.skills.map(
    (s) =>
      `| ${s.skill} | ${s.questions} | ${s.token_agreement} | ${s.nll_none} → ${s.nll_adapter} (${s.shift}) | ${s.studio_nll_none} → ${s.studio_nll_adapter} (${s.studio_shift}) | ${s.shift_gap} |`,
  );
  const own =
    l.run === 'llamacpp-only'
      ? " A run of its own (`npm run check:real-model -- --llamacpp-only`): the skills distilled again, so the NLLs are not the table's."
      : '';
  return [
    `**In llama.cpp** (${l.runtime}; ${l.model}; ${l.adapter}${l.measured ? `; ${l.measured.slice(0, 10)}` : ''}):` +
      ` greedy tokens the engine's for ${l.token_agreement} of the first ${l.tokens} on ${l.questions} held-out questions` +
      ` (${l.token_agreement_forced} when fed the engine's tokens; target ≥ ${TARGET.tokenAgreement} ${met(l.token_agreement >= TARGET.tokenAgreement)});` +
      ` the adapter moves llama.cpp's NLL of the teacher's answers as it moves ours within ${l.max_shift_gap} nats` +
      ` (target ≤ ${TARGET.shiftGap} ${met(l.max_shift_gap <= TARGET.shiftGap)}).${own}`,
    '',
    '| skill | questions | token agreement | llama.cpp NLL none → adapter (shift) | studio NLL none → adapter (shift) | shift gap |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    ...(l.quantized
      ? [
          '',
          `On ${l.quantized.model} itself (what llama.cpp users load; its 8-bit activations round differently from the` +
            ` engine's float32): agreement ${l.quantized.token_agreement} (${l.quantized.token_agreement_forced} fed the engine's tokens),` +
            ` ${l.quantized.token_agreement_no_adapter} with no adapter on either side; largest shift gap ${l.quantized.max_shift_gap} nats.` +
            ` On the float32 twin, with no adapter: ${l.token_agreement_no_adapter}.`,
        ]
      : []),
  ];
}
