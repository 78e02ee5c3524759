// Migration 10 (docs/store.md "Names") on a library as version 9 left it: an instant adapter's recipe
// of kind `compile`, a `parametric` trajectory, an evolve run with a `parametric` mode and score, and
// an adoption of a `compile` adapter all read back as `instant`, every row kept, and the adapter's key
// is still the one a new compile of the same skill computes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../main/store/adapter-key';
import { encodeAdapter, sha256Hex } from '../../../main/store/adapter-tensors';
import { AdaptersRepo } from '../../../main/store/adapters-repo';
import { AdoptionsRepo } from '../../../main/store/adoptions-repo';
import { openDatabase } from '../../../main/store/db';
import { EvolveRepo } from '../../../main/store/evolve-repo';
import { migrate } from '../../../main/store/migrate';
import { migrations, SCHEMA_VERSION } from '../../../main/store/migrations';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { TrajectoriesRepo } from '../../../main/store/trajectories-repo';
import { randomAdapter } from '../adapters/builders';
import { newVersion } from './builders';

const BUNDLE_SHA = 'a'.repeat(64);
const OLD_RECIPE = { kind: 'compile', hypernet: 'perceiver', combine: 'mean' };
const UID = (c: string) => c.repeat(32);
const RUN = 'abcdef012345';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-migrate10-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A studio.db at version 9 with rows in the old names; returns the instant adapter's key. */
function version9Library(file: string): string {
  const raw = new BetterSqlite3(file);
  raw.pragma('foreign_keys = ON');
  const before = migrations.findIndex((m) => m.version === 10);
  expect(before).toBe(9);
  migrate(raw, migrations.slice(0, before));
  new SkillsRepo(raw).importBatch('fixture', [newVersion({ name: 'alpha', package: null })]);
  const skill = raw.prepare('SELECT id, sha256 FROM skill_versions').get() as { id: number; sha256: string };
  raw
    .prepare(`INSERT INTO bundles (sha256, manifest, path, created_at) VALUES (?, '{"id":"tiny"}', '/b', '2026-01-01')`)
    .run(BUNDLE_SHA);
  // The key as the build before the rename computed it: the recipe hashed with kind `compile`.
  const key = sha256Hex(canonicalJson({ bundle: BUNDLE_SHA, skill: skill.sha256, recipe: OLD_RECIPE }));
  const adapter = randomAdapter({ seed: 1 });
  const bytes = Buffer.from(encodeAdapter(adapter));
  raw
    .prepare(
      `INSERT INTO adapters (skill_version_id, bundle_id, key, rank, alpha, recipe, tensors, tensors_sha256, tensors_bytes, created_at)
       VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, '2026-01-02T00:00:00Z')`,
    )
    .run(skill.id, key, adapter.rank, adapter.alpha, JSON.stringify(OLD_RECIPE), bytes, sha256Hex(bytes), bytes.length);
  const trajectory = raw.prepare(
    `INSERT INTO trajectories (uid, source, condition, adapter_key, messages, created_at)
     VALUES (?, 'playground', ?, ?, '[{"role":"user","content":"q"}]', ?)`,
  );
  trajectory.run(UID('1'), 'parametric', key, '2026-01-03T00:00:00.000Z');
  trajectory.run(UID('2'), 'none', null, '2026-01-03T00:00:01.000Z');
  trajectory.run(UID('3'), null, null, '2026-01-03T00:00:02.000Z');
  raw
    .prepare(
      `INSERT INTO evolve_runs (uid, skill_version_id, generator, iterations, per_iteration, seed, modes, max_tokens,
         accept, status, created_at, updated_at)
       VALUES (?, ?, 'offline', 1, 1, 0, '["in_context","parametric"]', 8, 1, 'done', '2026-01-04', '2026-01-04')`,
    )
    .run(RUN, skill.id);
  const score = { passed: 1, n: 2, passRate: 0.5, failed: [{ id: 't2', reason: null }] };
  raw
    .prepare(
      `INSERT INTO evolve_candidates (run_id, iteration, idx, operator, content, sha256, diff, score, scores, created_at, scored_at)
       VALUES (1, 0, 0, 'baseline', 'x', ?, '', 0.5, ?, '2026-01-04', '2026-01-04')`,
    )
    .run('c'.repeat(64), JSON.stringify({ in_context: score, parametric: { ...score, passed: 2, passRate: 1 } }));
  raw
    .prepare(
      `INSERT INTO adoptions (name, version, kind, run_uid, episode, source, adapter_id, skill_version_id, created_at)
       VALUES ('alpha', 1, 'lesson', ?, 1, ?, 1, ?, '2026-01-05')`,
    )
    .run(
      RUN,
      JSON.stringify({ run: RUN, mode: 'lesson', seed: 0, episode: 1, adapterKey: key, recipe: OLD_RECIPE }),
      skill.id,
    );
  raw.close();
  return key;
}

describe('migration 10 (instant, one name)', () => {
  it('reads every old-name row of a version 9 library as instant, keys unchanged', () => {
    const file = join(dir, 'studio.db');
    const key = version9Library(file);
    const db = openDatabase(file);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);

      const adapters = new AdaptersRepo(db);
      const [row] = adapters.list();
      expect(row).toMatchObject({ key, recipe: { kind: 'instant', hypernet: 'perceiver', combine: 'mean' } });
      // Rewritten in place, not only read through the schema's alias.
      expect(db.prepare(`SELECT json_extract(recipe, '$.kind') FROM adapters`).pluck().get()).toBe('instant');
      // A compile of the same version now computes the stored key, so it finds this row.
      const skillRow = db.prepare('SELECT id FROM skill_versions').pluck().get() as number;
      expect(adapters.keyFor(1, skillRow, { kind: 'instant', hypernet: 'perceiver', combine: 'mean' })).toBe(key);

      const trajectories = new TrajectoriesRepo(db);
      expect(trajectories.count()).toBe(3);
      expect(trajectories.get(UID('1')).trajectory).toMatchObject({ condition: 'instant', adapter: key });
      expect(trajectories.get(UID('2')).trajectory.condition).toBe('none');
      expect(trajectories.get(UID('3')).trajectory.condition).toBeNull();
      // The rebuilt table keeps its indexes and refuses the old name from now on.
      const indexes = db
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'trajectories' AND sql IS NOT NULL`,
        )
        .pluck()
        .all();
      expect(indexes.sort()).toEqual(['trajectories_created', 'trajectories_skill_name', 'trajectories_skill_version']);
      expect(() =>
        db
          .prepare(
            `INSERT INTO trajectories (uid, source, condition, messages, created_at) VALUES (?, 'playground', 'parametric', '[]', 'x')`,
          )
          .run(UID('4')),
      ).toThrow(/CHECK constraint failed/);

      const evolve = new EvolveRepo(db);
      const run = evolve.get(RUN);
      expect(run.modes).toEqual(['in_context', 'instant']);
      const [baseline] = evolve.candidates(run);
      expect(Object.keys(baseline!.scores!).sort()).toEqual(['in_context', 'instant']);
      expect(baseline!.scores!.instant).toMatchObject({ passed: 2, n: 2, passRate: 1 });
      expect(baseline!.scores!.in_context!.failed).toEqual([{ id: 't2', reason: null }]);

      const [adoption] = new AdoptionsRepo(db).list();
      expect(adoption!.source.recipe).toEqual({ kind: 'instant', hypernet: 'perceiver', combine: 'mean' });
    } finally {
      db.close();
    }
  });

  it('an empty library migrates too', () => {
    const db = openDatabase(join(dir, 'empty.db'));
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(new TrajectoriesRepo(db).count()).toBe(0);
    } finally {
      db.close();
    }
  });
});
