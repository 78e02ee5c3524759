// `pskills verify` and `pskills tests show|set`: a skill version's verifier tests (SkillWorld checker
// specs, or prompts with expect exact / contains / regex / json_schema) and their pass rate.
import { join, resolve } from 'node:path';
import type { VerifierTest, VerifyMode, VerifyRunResult } from '../../common/api/verify-schemas';
import { StudioError } from '../../common/errors';
import { GateError, readGatedSync } from '../files/read-gate';
import type { Command } from './command';
import { usageError } from './usage';

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readGatedSync(file, 'tests JSON').toString('utf8');
  } catch (err) {
    if (err instanceof GateError && err.code !== 'not_found') throw err;
    throw new StudioError('not_found', `cannot read ${what} ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new StudioError('invalid_input', `${file}: not JSON (${(err as Error).message})`);
  }
}

/** A SkillWorld folder's practice questions for one skill as tests: the row's messages, its checker
 * spec. tasks.jsonl holds the scored tasks and is never read here: a distil trains on a skill's
 * tests, so tests taken from it would train on what the eval scores (docs/skillworld.md). */
export function skillworldTests(dir: string, skill: string): VerifierTest[] {
  const file = join(dir, 'practice.jsonl');
  let text: string;
  try {
    text = readGatedSync(file, 'tests JSON').toString('utf8');
  } catch (err) {
    if (err instanceof GateError && err.code !== 'not_found') throw err;
    throw new StudioError(
      'not_found',
      `${dir}: no practice.jsonl (generate the folder with --practice-per-skill N, N ≥ 1; its tasks.jsonl is for scoring only): ${(err as Error).message}`,
    );
  }
  const tests: VerifierTest[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let task: { skill?: unknown; task_id?: unknown; messages?: unknown; checker?: unknown };
    try {
      task = JSON.parse(line) as typeof task;
    } catch {
      throw new StudioError('invalid_input', `${file}: line ${i + 1}: not JSON`);
    }
    if (task.skill !== skill) return;
    tests.push({
      id: String(task.task_id ?? `line-${i + 1}`),
      messages: task.messages as VerifierTest['messages'],
      expect: task.checker as VerifierTest['expect'],
    });
  });
  if (tests.length === 0) throw new StudioError('not_found', `${file} has no practice question for skill "${skill}"`);
  return tests;
}

export const testsShow: Command = {
  name: 'tests show',
  usage: '<name>[@<n>]',
  summary: "a skill version's verifier tests (its own, or inherited from an earlier version)",
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length !== 1) throw usageError(testsShow);
    const r = await withStudio(values, (api) => api.verify.tests(flags.skillRef(positionals[0]!)));
    if (values.json) {
      io.out(JSON.stringify(r));
      return;
    }
    const from =
      r.from === null
        ? 'no tests'
        : r.from === r.skill.version
          ? `${r.tests.length} tests`
          : `${r.tests.length} tests, from version ${r.from}`;
    io.out(`${r.skill.name}@${r.skill.version}: ${from}`);
    for (const t of r.tests)
      io.out(
        `${t.id}\t${t.expect.kind}\t${(t.prompt ?? t.messages!.at(-1)!.content).replace(/\s+/g, ' ').slice(0, 80)}`,
      );
  },
};

export const testsSet: Command = {
  name: 'tests set',
  usage: '<name>[@<n>] (FILE.json | --skillworld DIR)',
  summary:
    "replaces the version's tests: a JSON array of {id, prompt | messages, expect, maxTokens?}, or the skill's SkillWorld practice questions",
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, { skillworld: { type: 'string' } });
    if (positionals.length !== (values.skillworld === undefined ? 2 : 1)) throw usageError(testsSet);
    const ref = flags.skillRef(positionals[0]!);
    const tests =
      values.skillworld === undefined
        ? readJson(resolve(positionals[1]!), 'tests')
        : skillworldTests(resolve(values.skillworld), ref.name);
    const r = await withStudio(values, (api) => api.verify.setTests({ ...ref, tests: tests as VerifierTest[] }));
    io.out(values.json ? JSON.stringify(r) : `${r.skill.name}@${r.skill.version}: ${r.tests.length} tests stored`);
  },
};

/** The CLI's JSON (snake_case, its stable shape, plus what the API adds). */
function verifyJson(r: VerifyRunResult) {
  return {
    pass_rate: r.passRate,
    n: r.n,
    passed: r.passed,
    results: r.results.map((t) => ({
      id: t.id,
      passed: t.passed,
      pass_rate: t.passRate,
      answer: t.answer,
      reason: t.reason,
      finish_reason: t.finishReason,
      completion_tokens: t.completionTokens,
      truncated: t.truncated,
      ...(t.practised !== undefined && { practised: t.practised }),
    })),
    ...(r.heldOut && {
      held_out: { n: r.heldOut.n, passed: r.heldOut.passed, pass_rate: r.heldOut.passRate, note: r.heldOut.note },
    }),
    skill: r.skill.name,
    version: r.skill.version,
    tests_from: r.testsFrom,
    mode: r.mode,
    adapter: r.adapter,
  };
}

export const verifyCommand: Command = {
  name: 'verify',
  usage: '<name>[@<n>] [--adapter ID | --in-context | --none] [--max-tokens N] [--test ID]… [--bundle DIR]',
  summary: "runs the version's tests greedily (default: its compiled adapter) → pass rate per test and overall",
  async run(argv, { io, flags, withStudio, untilDone }) {
    const { values, positionals } = flags.parse(argv, {
      bundle: { type: 'string' },
      adapter: { type: 'string' },
      'in-context': { type: 'boolean', default: false },
      none: { type: 'boolean', default: false },
      'max-tokens': { type: 'string' },
      test: { type: 'string', multiple: true },
    });
    if (positionals.length !== 1) throw usageError(verifyCommand);
    const chosen = [values.adapter !== undefined, values['in-context'], values.none].filter(Boolean).length;
    if (chosen > 1) throw new StudioError('invalid_input', 'give at most one of --adapter, --in-context, --none');
    const mode: VerifyMode =
      values.adapter !== undefined ? 'adapter' : values['in-context'] ? 'in_context' : values.none ? 'none' : 'instant';
    const input = {
      ...flags.skillRef(positionals[0]!),
      mode,
      ...(values.adapter !== undefined && { adapter: values.adapter }),
      ...(values['max-tokens'] !== undefined && {
        maxTokens: flags.integer(values['max-tokens'], '--max-tokens', { min: 1 }),
      }),
      ...(values.test && { tests: values.test }),
    };
    const r = await withStudio(values, async (api) => {
      const handle = api.verify.run(input, (e) => {
        if (values.json) return;
        if (e.type === 'compile' && e.chunk > 0) io.err(`compiling: chunk ${e.chunk}/${e.chunks}`);
        if (e.type === 'start') io.err(`running ${e.tests} tests (${mode})…`);
      });
      return untilDone(handle);
    });
    if (values.json) {
      io.out(JSON.stringify(verifyJson(r)));
      return;
    }
    if (r.testsFrom === null) io.err(`${r.skill.name}@${r.skill.version} has no tests (pskills tests set)`);
    for (const t of r.results)
      io.out(
        `${t.passed ? 'PASS' : 'FAIL'}\t${t.id}${t.practised ? ' (practised)' : ''}${t.reason ? `\t${t.reason}` : ''}`,
      );
    io.out(
      `${r.skill.name}@${r.skill.version} ${r.mode}${r.adapter ? ` (adapter ${r.adapter})` : ''}: ${r.passed}/${r.n} passed, pass rate ${r.passRate.toFixed(3)}`,
    );
    if (r.heldOut)
      io.out(`held out: ${r.heldOut.passRate === null ? '-' : r.heldOut.passRate.toFixed(3)} (${r.heldOut.note})`);
  },
};
