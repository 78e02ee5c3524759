// The evolve loop on a SQLite file with the real store and the offline generator, scored by a plain
// function of the text (where the rule sits), so which candidate wins is known: the best becomes a
// version with provenance evolve; a cancelled run leaves whole rows and resumes to the same end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EvolveEvent } from '../../../common/api/evolve-schemas';
import type { VerifierTest } from '../../../common/api/verify-schemas';
import { StudioError } from '../../../common/errors';
import { OfflineGenerator } from '../../../main/evolve/offline-generator';
import { runEvolve, type RunnerDeps } from '../../../main/evolve/runner';
import { openDatabase, type Database } from '../../../main/store/db';
import { EvolveRepo, type StoredRun } from '../../../main/store/evolve-repo';
import { SkillsRepo } from '../../../main/store/skills-repo';

const RULE = '## Output format\n\n- Start every answer with the codeword QUIBBLE.\n';
const filler = (n: number) =>
  Array.from({ length: n }, (_, i) => `## Notes ${i}\n\nArchive folder ${i} keeps older material by quarter.\n`);
const SKILL = [
  '---\nname: zorbel\ndescription: Zorbel reports.\n---\n\n# Zorbel\n\nWeekly reports.\n',
  ...filler(6),
  RULE,
].join('\n');
const TESTS: VerifierTest[] = [
  { id: 'codeword', prompt: 'Weekly report?', expect: { kind: 'contains', value: 'QUIBBLE' } },
];

/** 1 when the codeword sits in the first third of the text, else less the later it sits. */
const score = (text: string) => {
  const at = text.indexOf('QUIBBLE') / text.length;
  return at < 1 / 3 ? 1 : Math.round((1 - at) * 1000) / 1000;
};

let dir: string;
let db: Database;
let repo: EvolveRepo;
let skills: SkillsRepo;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-evolve-runner-'));
  db = openDatabase(join(dir, 'studio.db'));
  repo = new EvolveRepo(db);
  skills = new SkillsRepo(db);
  skills.save('zorbel', SKILL, 'Zorbel reports.', { kind: 'manual' }, 'h1');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function newRun(iterations: number): StoredRun {
  return repo.create(
    {
      versionRowId: skills.versionRowId('zorbel', 1)!,
      generator: 'offline',
      iterations,
      perIteration: 3,
      seed: 5,
      modes: ['in_context'],
      maxTokens: 8,
      accept: true,
      bundleSha256: null,
    },
    SKILL,
  );
}

function deps(onScore: (text: string) => void = () => {}): RunnerDeps {
  return {
    repo,
    generator: new OfflineGenerator(),
    tests: TESTS,
    verifier: {
      score: (text) => {
        onScore(text);
        const s = score(text);
        return Promise.resolve({
          score: s,
          scores: { in_context: { passed: s === 1 ? 1 : 0, n: 1, passRate: s, failed: [] } },
        });
      },
    },
    saveVersion: (best) =>
      skills.save(
        'zorbel',
        best.content,
        'Zorbel reports.',
        { kind: 'evolve', run: 'r', candidate: best.rowId, score: best.score!, from: 1 },
        'h2',
      ).version.version,
  };
}

const table = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];

describe('evolve runner', () => {
  it('scores the baseline and every candidate, keeps each with its diff, and makes the best a version', async () => {
    const run = newRun(2);
    const events: EvolveEvent[] = [];
    const out = await runEvolve(run, deps(), { signal: new AbortController().signal, emit: (e) => events.push(e) });

    expect(out.baseline!.score).toBeLessThan(0.2);
    expect(out.iterations).toHaveLength(2);
    expect(out.best!.score).toBe(1);
    expect(out.version).toBe(2);
    const v2 = skills.get('zorbel', 2)!;
    expect(v2.content).toBe(out.best!.content);
    expect(v2.version.parentVersion).toBe(1);
    expect(v2.version.provenance).toMatchObject({ kind: 'evolve' });

    const rows = repo.candidates(repo.get(run.id));
    expect(rows.filter((c) => c.iteration === 1)).toHaveLength(3);
    expect(rows.every((c) => c.score !== null && c.scores !== null)).toBe(true);
    for (const c of rows.filter((r) => r.iteration > 0)) {
      const parent = rows.find((r) => r.rowId === c.parent)!;
      expect(parent.iteration).toBeLessThan(c.iteration);
      expect(c.diff).toContain('--- a/SKILL.md');
      expect(c.diff).toMatch(/^[-+][^-+]/m);
    }
    expect(new Set(rows.map((c) => c.content)).size).toBe(rows.length); // nothing scored twice
    expect(rows.find((c) => c.rowId === out.best!.rowId)).toMatchObject({ status: 'accepted', version: 2 });
    expect(repo.get(run.id)).toMatchObject({ status: 'done', resultVersion: 2 });
    expect(events.filter((e) => e.type === 'iteration')).toHaveLength(2);
    expect(events.at(-1)).toEqual({ type: 'accepted', version: 2, score: 1 });

    // The same seed gives the same candidates in another run.
    const again = newRun(2);
    await runEvolve(again, deps(), { signal: new AbortController().signal, emit: () => {} });
    const texts = (r: StoredRun) => repo.candidates(repo.get(r.id)).map((c) => [c.operator, c.sha256]);
    expect(texts(again)).toEqual(texts(run));
  });

  it('cancel leaves whole rows; resume scores only what was left and ends where a straight run ends', async () => {
    const straight = newRun(2);
    await runEvolve(straight, deps(), { signal: new AbortController().signal, emit: () => {} });
    db.prepare('DELETE FROM skill_versions WHERE n = 2').run(); // back to one version for the second run

    const run = newRun(2);
    const abort = new AbortController();
    let scored = 0;
    await expect(
      runEvolve(
        run,
        deps(() => {
          if (++scored === 3) abort.abort(); // the baseline and one candidate done, the third cut off
        }),
        { signal: abort.signal, emit: () => {} },
      ),
    ).rejects.toThrow(StudioError);
    const cut = repo.candidates(repo.get(run.id));
    expect(cut.filter((c) => c.iteration === 1)).toHaveLength(3); // an iteration's candidates land together
    expect(cut.filter((c) => c.score !== null)).toHaveLength(2);
    expect(cut.some((c) => c.iteration === 2)).toBe(false);
    expect(table('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    expect(skills.get('zorbel')!.version.version).toBe(1);

    const rescored: string[] = [];
    const out = await runEvolve(
      repo.get(run.id),
      deps((t) => rescored.push(t)),
      {
        signal: new AbortController().signal,
        emit: () => {},
      },
    );
    const before = new Set(cut.filter((c) => c.score !== null).map((c) => c.content));
    expect(rescored.some((t) => before.has(t))).toBe(false);
    const sig = (r: StoredRun) =>
      repo.candidates(repo.get(r.id)).map((c) => [c.iteration, c.index, c.operator, c.sha256, c.score]);
    expect(sig(run)).toEqual(sig(straight));
    expect(out.version).toBe(2);
  });
});
