// The held-out tasks of the lessons so far, answered greedily under one condition (an adapter, or
// text as the system message) and judged by their SkillWorld checkers: the way verify.run answers
// (generateBatch in the engine worker, off the main thread; the text cut to fit the context as
// compare's in_context column does).
import { StudioError } from '../../common/errors';
import { checkExpect } from '../../common/verify/expect';
import type { BundleInfo, EngineAdapter, GenerateRequest } from '../engine';
import { answerBatch, chatPrompt } from '../skills/answer';
import type { SuiteTask } from './suite';

/** Rows per engine batch. */
const BATCH = 8;

export interface Condition {
  adapter: EngineAdapter | null;
  /** Text put before the task as the system message (in_context), or null. */
  system: string | null;
}

export interface Measured {
  n: number;
  passed: number;
  /** Tasks whose system text was cut to fit the context. */
  truncated: number;
  results: { id: string; passed: boolean; answer: string }[];
}

function request(
  bundle: BundleInfo,
  t: SuiteTask,
  cond: Condition,
  maxTokens: number,
): { request: GenerateRequest; truncated: boolean } {
  const { ids: prompt, truncated } = chatPrompt(bundle, t.messages, cond.system, maxTokens);
  if (prompt.length + maxTokens > bundle.manifest.architecture.max_positions)
    throw new StudioError(
      'invalid_input',
      `task ${t.id}: its prompt is ${prompt.length} tokens; with ${maxTokens} to answer it exceeds the model's ${bundle.manifest.architecture.max_positions} positions`,
    );
  return {
    request: { prompt, adapter: cond.adapter, maxNewTokens: maxTokens, sampling: { temperature: 0 }, stop: [] },
    truncated,
  };
}

export async function measure(
  bundle: BundleInfo,
  tasks: readonly SuiteTask[],
  cond: Condition,
  opts: { maxTokens: number; signal?: AbortSignal },
): Promise<Measured> {
  const out: Measured = { n: tasks.length, passed: 0, truncated: 0, results: [] };
  for (let start = 0; start < tasks.length; start += BATCH) {
    const chunk = tasks.slice(start, start + BATCH);
    const rows = chunk.map((t) => request(bundle, t, cond, opts.maxTokens));
    const answers = await answerBatch(
      bundle,
      rows.map((r) => r.request),
      opts.signal,
    );
    if (opts.signal?.aborted) throw new StudioError('cancelled', 'continual run cancelled');
    answers.forEach((r, i) => {
      const passed = checkExpect(chunk[i]!.checker, r.text).passed;
      out.passed += passed ? 1 : 0;
      out.truncated += rows[i]!.truncated ? 1 : 0;
      out.results.push({ id: chunk[i]!.id, passed, answer: r.text });
    });
  }
  return out;
}
