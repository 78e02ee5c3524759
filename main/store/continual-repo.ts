// Continual runs and their episodes (docs/store.md "continual_runs", "continual_episodes"): the only
// writer of both tables. An episode row is written inside the transaction that absorbs its lesson, and
// its measurement in one later write; every write is one IMMEDIATE transaction.
import { randomBytes } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { ContinualRunInput, type ContinualMode } from '../../common/api/continual-schemas';
import { StudioError } from '../../common/errors';

export type ContinualStatus = 'running' | 'cancelled' | 'failed' | 'done';

export interface StoredContinualRun {
  rowId: number;
  id: string;
  mode: ContinualMode;
  input: ContinualRunInput;
  bundleSha256: string;
  status: ContinualStatus;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AbsorbedEpisode {
  episode: number;
  world: string;
  lesson: { name: string; version: number; summariser: string } | null;
  globalVersion: number | null;
}

export interface Measurement {
  passed: number;
  n: number;
  adapter: string | null;
  passedTasks: string[];
  truncated: number;
  ms: number;
}

export interface StoredEpisode extends AbsorbedEpisode {
  /** null until the episode's held-out tasks were measured. */
  measured: Measurement | null;
}

interface RunRow {
  id: number;
  uid: string;
  mode: ContinualMode;
  input: string;
  bundle_sha256: string;
  status: ContinualStatus;
  error: string | null;
  created_at: string;
  updated_at: string;
}

interface EpisodeRow {
  episode: number;
  world: string;
  lesson_name: string | null;
  lesson_version: number | null;
  summariser: string | null;
  global_version: number | null;
  passed: number | null;
  n: number | null;
  adapter: string | null;
  passed_tasks: string | null;
  truncated: number | null;
  ms: number | null;
}

function toRun(r: RunRow): StoredContinualRun {
  return {
    rowId: r.id,
    id: r.uid,
    mode: r.mode,
    input: ContinualRunInput.parse(JSON.parse(r.input)),
    bundleSha256: r.bundle_sha256,
    status: r.status,
    error: r.error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toEpisode(r: EpisodeRow): StoredEpisode {
  return {
    episode: r.episode,
    world: r.world,
    lesson:
      r.lesson_name === null ? null : { name: r.lesson_name, version: r.lesson_version!, summariser: r.summariser! },
    globalVersion: r.global_version,
    measured:
      r.n === null
        ? null
        : {
            passed: r.passed!,
            n: r.n,
            adapter: r.adapter,
            passedTasks: JSON.parse(r.passed_tasks!) as string[],
            truncated: r.truncated!,
            ms: r.ms!,
          },
  };
}

export class ContinualRepo {
  private readonly sql: {
    insertRun: Statement<unknown[]>;
    byUid: Statement<[string], RunRow>;
    episodes: Statement<[number], EpisodeRow>;
    absorbed: Statement<unknown[]>;
    measured: Statement<unknown[]>;
    status: Statement<[ContinualStatus, string | null, string, number]>;
  };

  constructor(
    private readonly db: Database,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.sql = {
      insertRun: db.prepare(
        `INSERT INTO continual_runs (uid, mode, input, bundle_sha256, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'running', ?, ?)`,
      ),
      byUid: db.prepare('SELECT * FROM continual_runs WHERE uid = ?'),
      episodes: db.prepare('SELECT * FROM continual_episodes WHERE run_id = ? ORDER BY episode'),
      absorbed: db.prepare(
        `INSERT INTO continual_episodes (run_id, episode, world, lesson_name, lesson_version, summariser, global_version, absorbed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      measured: db.prepare(
        `UPDATE continual_episodes SET passed = ?, n = ?, adapter = ?, passed_tasks = ?, truncated = ?, ms = ?, measured_at = ?
         WHERE run_id = ? AND episode = ? AND measured_at IS NULL`,
      ),
      status: db.prepare('UPDATE continual_runs SET status = ?, error = ?, updated_at = ? WHERE id = ?'),
    };
  }

  /** `uid`: the run workspace's id (its folder), else a new one. */
  create(input: ContinualRunInput, bundleSha256: string, uid = randomBytes(6).toString('hex')): StoredContinualRun {
    const now = this.clock().toISOString();
    this.db
      .transaction(() => this.sql.insertRun.run(uid, input.mode, JSON.stringify(input), bundleSha256, now, now))
      .immediate();
    return this.get(uid);
  }

  /** The run with this id; not_found names it. */
  get(id: string): StoredContinualRun {
    const row = this.sql.byUid.get(id);
    if (!row) throw new StudioError('not_found', `no continual run "${id}"`, { run: id });
    return toRun(row);
  }

  /** Every run stored here, oldest first (a run workspace holds one). */
  all(): StoredContinualRun[] {
    return (this.db.prepare('SELECT * FROM continual_runs ORDER BY id').all() as RunRow[]).map(toRun);
  }

  episodes(run: StoredContinualRun): StoredEpisode[] {
    return this.sql.episodes.all(run.rowId).map(toEpisode);
  }

  /**
   * Runs `absorb` (which writes the global adapter's next version, or nothing) and stores the episode
   * with the version it returns, in one transaction: both land or neither does.
   */
  absorb(
    run: StoredContinualRun,
    ep: Omit<AbsorbedEpisode, 'globalVersion'>,
    absorb: () => number | null,
  ): number | null {
    return this.db
      .transaction(() => {
        const globalVersion = absorb();
        const now = this.clock().toISOString();
        this.sql.absorbed.run(
          run.rowId,
          ep.episode,
          ep.world,
          ep.lesson?.name ?? null,
          ep.lesson?.version ?? null,
          ep.lesson?.summariser ?? null,
          globalVersion,
          now,
        );
        this.sql.status.run('running', null, now, run.rowId);
        return globalVersion;
      })
      .immediate();
  }

  /** The episode's measurement; an episode is measured once. */
  measured(run: StoredContinualRun, episode: number, m: Measurement): void {
    this.db
      .transaction(() => {
        const now = this.clock().toISOString();
        const changes = this.sql.measured.run(
          m.passed,
          m.n,
          m.adapter,
          JSON.stringify(m.passedTasks),
          m.truncated,
          m.ms,
          now,
          run.rowId,
          episode,
        ).changes;
        if (changes !== 1)
          throw new StudioError('conflict', `episode ${episode} of run ${run.id} is already measured or not there`);
      })
      .immediate();
  }

  setStatus(run: StoredContinualRun, status: ContinualStatus, error: string | null = null): void {
    this.db.transaction(() => this.sql.status.run(status, error, this.clock().toISOString(), run.rowId)).immediate();
  }
}
