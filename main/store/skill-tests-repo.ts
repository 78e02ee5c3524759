// Verifier tests, stored with a skill version (docs/store.md "skill_tests"): one row per version that
// was given tests, its whole test set as JSON. A version without a row inherits the set of the newest
// earlier version that has one, so tests written once follow the skill's edits until changed.
import type { Database, Statement } from 'better-sqlite3';
import { StudioError } from '../../common/errors';
import { TestSet, type VerifierTest } from '../../common/api/verify-schemas';

export class SkillTestsRepo {
  private readonly sql: {
    nearest: Statement<[string, number], { n: number; tests: string }>;
    put: Statement<[number, string, string]>;
  };

  constructor(
    private readonly db: Database,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.sql = {
      nearest: db.prepare(
        `SELECT v.n, t.tests FROM skill_tests t JOIN skill_versions v ON v.id = t.skill_version_id JOIN skills s ON s.id = v.skill_id
         WHERE s.name = ? AND v.n <= ? ORDER BY v.n DESC LIMIT 1`,
      ),
      put: db.prepare(
        `INSERT INTO skill_tests (skill_version_id, tests, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (skill_version_id) DO UPDATE SET tests = excluded.tests, updated_at = excluded.updated_at`,
      ),
    };
  }

  /** The tests of skill `name` version `version`, and the version they were stored with (null: none). */
  get(name: string, version: number): { from: number | null; tests: VerifierTest[] } {
    const row = this.sql.nearest.get(name, version);
    if (!row) return { from: null, tests: [] };
    const parsed = TestSet.safeParse(JSON.parse(row.tests));
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      throw new StudioError(
        'internal',
        `skill "${name}" version ${row.n}: stored tests do not fit their schema at ${i.path.join('.')}: ${i.message}`,
      );
    }
    return { from: row.n, tests: parsed.data };
  }

  /** Replaces the test set of the version with this row id (an empty set stops inheritance). */
  set(versionRowId: number, tests: readonly VerifierTest[]): void {
    this.db
      .transaction(() => this.sql.put.run(versionRowId, JSON.stringify(tests), this.clock().toISOString()))
      .immediate();
  }
}
