// Evolve runs and their candidates (docs/store.md "evolve_runs", "evolve_candidates"): the only writer
// of both tables. Every write is one IMMEDIATE transaction: a run with its baseline, an iteration's
// candidates together, one candidate's scores, the run's end with the version it made.
import { createHash, randomBytes } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { EvolveGeneratorKind, EvolveMode } from '../../common/api/evolve-schemas';
import { StudioError } from '../../common/errors';

export type RunStatus = 'running' | 'cancelled' | 'failed' | 'done';
export type CandidateStatus = 'proposed' | 'accepted' | 'rejected';

export interface ModeScore {
  passed: number;
  n: number;
  passRate: number;
  /** Tests that failed, with the checker's reason. */
  failed: { id: string; reason: string | null }[];
}
export type CandidateScores = Partial<Record<EvolveMode, ModeScore>>;

/** What a run was asked to do, as stored with it. */
export interface RunSettings {
  generator: EvolveGeneratorKind;
  iterations: number;
  perIteration: number;
  seed: number;
  modes: EvolveMode[];
  maxTokens: number;
  accept: boolean;
  bundleSha256: string | null;
}

export interface StoredRun extends RunSettings {
  rowId: number;
  id: string;
  skill: { name: string; version: number; versionRowId: number };
  status: RunStatus;
  error: string | null;
  resultVersion: number | null;
  /** The best version compiled with the tier the skill uses; null until compiled. */
  bestCompiled: BestCompiled | null;
  createdAt: string;
  updatedAt: string;
}

export interface StoredCandidate {
  rowId: number;
  iteration: number;
  index: number;
  parent: number | null;
  operator: string;
  note: string;
  content: string;
  sha256: string;
  diff: string;
  score: number | null;
  scores: CandidateScores | null;
  status: CandidateStatus;
  version: number | null;
  createdAt: string;
}

export interface NewRun extends RunSettings {
  versionRowId: number;
}

export type NewCandidate = Pick<StoredCandidate, 'index' | 'parent' | 'operator' | 'note' | 'content' | 'diff'>;

interface RunRow {
  id: number;
  uid: string;
  skill_version_id: number;
  skill_name: string;
  skill_version: number;
  generator: EvolveGeneratorKind;
  iterations: number;
  per_iteration: number;
  seed: number;
  modes: string;
  max_tokens: number;
  accept: number;
  bundle_sha256: string | null;
  status: RunStatus;
  error: string | null;
  result_version: number | null;
  best_tier: 'instant' | 'distilled' | null;
  best_adapter: string | null;
  best_accuracy: number | null;
  created_at: string;
  updated_at: string;
}

export interface BestCompiled {
  tier: 'instant' | 'distilled';
  adapter: string | null;
  /** distilled: the adapter's pass rate on the skill's tests; null for instant. */
  accuracy: number | null;
}

/** The columns named as StoredCandidate's fields hold them as they are. */
interface CandidateRow extends Pick<
  StoredCandidate,
  'iteration' | 'operator' | 'note' | 'content' | 'sha256' | 'diff' | 'score' | 'status' | 'version'
> {
  id: number;
  idx: number;
  parent_id: number | null;
  scores: string | null;
  created_at: string;
}

const RUN_SELECT = `SELECT r.*, s.name AS skill_name, v.n AS skill_version
  FROM evolve_runs r JOIN skill_versions v ON v.id = r.skill_version_id JOIN skills s ON s.id = v.skill_id`;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function toRun(r: RunRow): StoredRun {
  return {
    rowId: r.id,
    id: r.uid,
    skill: { name: r.skill_name, version: r.skill_version, versionRowId: r.skill_version_id },
    generator: r.generator,
    iterations: r.iterations,
    perIteration: r.per_iteration,
    seed: r.seed,
    modes: JSON.parse(r.modes) as EvolveMode[],
    maxTokens: r.max_tokens,
    accept: r.accept === 1,
    bundleSha256: r.bundle_sha256,
    status: r.status,
    error: r.error,
    resultVersion: r.result_version,
    bestCompiled:
      r.best_tier === null ? null : { tier: r.best_tier, adapter: r.best_adapter, accuracy: r.best_accuracy },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toCandidate(r: CandidateRow): StoredCandidate {
  return {
    rowId: r.id,
    iteration: r.iteration,
    index: r.idx,
    parent: r.parent_id,
    operator: r.operator,
    note: r.note,
    content: r.content,
    sha256: r.sha256,
    diff: r.diff,
    score: r.score,
    scores: r.scores === null ? null : (JSON.parse(r.scores) as CandidateScores),
    status: r.status,
    version: r.version,
    createdAt: r.created_at,
  };
}

export class EvolveRepo {
  private readonly sql: {
    insertRun: Statement<unknown[]>;
    insertCandidate: Statement<unknown[]>;
    byUid: Statement<[string], RunRow>;
    bySkill: Statement<{ name: string | null; limit: number }, RunRow>;
    candidates: Statement<[number], CandidateRow>;
    score: Statement<[number, string, string, number, number]>;
    status: Statement<[RunStatus, string | null, string, number]>;
    finish: Statement<[number | null, string, number]>;
    mark: Statement<[CandidateStatus, number | null, number, number]>;
    best: Statement<[string, string | null, number | null, number]>;
  };

  constructor(
    private readonly db: Database,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.sql = {
      insertRun: db.prepare(
        `INSERT INTO evolve_runs (uid, skill_version_id, generator, iterations, per_iteration, seed, modes, max_tokens,
           accept, bundle_sha256, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
      ),
      insertCandidate: db.prepare(
        `INSERT INTO evolve_candidates (run_id, iteration, idx, parent_id, operator, note, content, sha256, diff, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      byUid: db.prepare(`${RUN_SELECT} WHERE r.uid = ?`),
      bySkill: db.prepare(`${RUN_SELECT} WHERE (@name IS NULL OR s.name = @name) ORDER BY r.id DESC LIMIT @limit`),
      candidates: db.prepare('SELECT * FROM evolve_candidates WHERE run_id = ? ORDER BY iteration, idx'),
      score: db.prepare(
        `UPDATE evolve_candidates SET score = ?, scores = ?, scored_at = ? WHERE id = ? AND run_id = ? AND score IS NULL`,
      ),
      status: db.prepare('UPDATE evolve_runs SET status = ?, error = ?, updated_at = ? WHERE id = ?'),
      finish: db.prepare(
        `UPDATE evolve_runs SET status = 'done', error = NULL, result_version = ?, updated_at = ? WHERE id = ?`,
      ),
      mark: db.prepare('UPDATE evolve_candidates SET status = ?, version = ? WHERE id = ? AND run_id = ?'),
      best: db.prepare('UPDATE evolve_runs SET best_tier = ?, best_adapter = ?, best_accuracy = ? WHERE id = ?'),
    };
  }

  /** A new run and its baseline candidate (iteration 0: the version's own text), together. */
  create(run: NewRun, baseline: string): StoredRun {
    const now = this.clock().toISOString();
    return this.db
      .transaction(() => {
        const uid = randomBytes(6).toString('hex');
        const { lastInsertRowid } = this.sql.insertRun.run(
          uid,
          run.versionRowId,
          run.generator,
          run.iterations,
          run.perIteration,
          run.seed,
          JSON.stringify(run.modes),
          run.maxTokens,
          run.accept ? 1 : 0,
          run.bundleSha256,
          now,
          now,
        );
        this.insert(Number(lastInsertRowid), 0, [
          { index: 0, parent: null, operator: 'baseline', note: '', content: baseline, diff: '' },
        ]);
        return this.get(uid);
      })
      .immediate();
  }

  /** The run with this id; not_found names it. */
  get(id: string): StoredRun {
    const row = this.sql.byUid.get(id);
    if (!row) throw new StudioError('not_found', `no evolve run "${id}"`, { run: id });
    return toRun(row);
  }

  /** Runs newest first, of one skill when named. */
  list(skill: string | null, limit = 100): StoredRun[] {
    return this.sql.bySkill.all({ name: skill, limit }).map(toRun);
  }

  candidates(run: StoredRun): StoredCandidate[] {
    return this.sql.candidates.all(run.rowId).map(toCandidate);
  }

  /** One iteration's candidates, all or none. */
  addIteration(run: StoredRun, iteration: number, candidates: readonly NewCandidate[]): StoredCandidate[] {
    return this.db.transaction(() => this.insert(run.rowId, iteration, candidates)).immediate();
  }

  /** A candidate's score and per-mode results; a candidate is scored once. */
  score(run: StoredRun, candidate: number, score: number, scores: CandidateScores): void {
    this.db
      .transaction(() => {
        const now = this.clock().toISOString();
        const changed = this.sql.score.run(score, JSON.stringify(scores), now, candidate, run.rowId).changes;
        if (changed !== 1)
          throw new StudioError('conflict', `candidate ${candidate} of run ${run.id} is already scored or not there`);
        this.sql.status.run('running', null, now, run.rowId);
      })
      .immediate();
  }

  setStatus(run: StoredRun, status: Exclude<RunStatus, 'done'>, error: string | null = null): void {
    this.db.transaction(() => this.sql.status.run(status, error, this.clock().toISOString(), run.rowId)).immediate();
  }

  /** Stores how the best version was compiled (tier, adapter, distilled accuracy on the skill's tests). */
  setBest(run: StoredRun, best: BestCompiled): void {
    this.db.transaction(() => this.sql.best.run(best.tier, best.adapter, best.accuracy, run.rowId)).immediate();
  }

  /**
   * Ends the run. `write` (a new skill version, in the same transaction) returns the version the run
   * made, or null; the accepted candidate is marked with it.
   */
  finish(run: StoredRun, accepted: { candidate: number; write: () => number } | null): number | null {
    return this.db
      .transaction(() => {
        const version = accepted ? accepted.write() : null;
        if (accepted) this.sql.mark.run('accepted', version, accepted.candidate, run.rowId);
        this.sql.finish.run(version, this.clock().toISOString(), run.rowId);
        return version;
      })
      .immediate();
  }

  /** Accepts (with the version `write` makes, in the same transaction) or rejects a candidate. */
  mark(run: StoredRun, candidate: number, status: 'accepted' | 'rejected', write?: () => number): number | null {
    return this.db
      .transaction(() => {
        const version = status === 'accepted' ? write!() : null;
        if (this.sql.mark.run(status, version, candidate, run.rowId).changes !== 1)
          throw new StudioError('not_found', `run ${run.id} has no candidate ${candidate}`);
        return version;
      })
      .immediate();
  }

  private insert(runRowId: number, iteration: number, candidates: readonly NewCandidate[]): StoredCandidate[] {
    const now = this.clock().toISOString();
    for (const c of candidates) {
      this.sql.insertCandidate.run(
        runRowId,
        iteration,
        c.index,
        c.parent,
        c.operator,
        c.note,
        c.content,
        sha256(c.content),
        c.diff,
        now,
      );
    }
    return this.sql.candidates
      .all(runRowId)
      .filter((r) => r.iteration === iteration)
      .map(toCandidate);
  }
}
