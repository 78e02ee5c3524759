// Trajectories: what a run sent and got back, with the skill version, adapter, bundle and sampling it
// ran with, a verifier's outcome and the user's rating (docs/store.md "trajectories"). The only
// writer of the `trajectories` table. Rows are immutable except for their rating.
import type { Database, Statement } from 'better-sqlite3';
import {
  TrajectoryMessage,
  TrajectorySampling,
  Verdict,
  type Trajectory,
  type TrajectoryCondition,
  type TrajectoryFilter,
  type TrajectorySource,
  type TrajectorySummary,
} from '../../common/api/trajectory-schemas';
import { StudioError } from '../../common/errors';
import { z } from 'zod';

export interface NewTrajectory {
  uid: string;
  source: TrajectorySource;
  /** The skill version it ran with: linked (`versionRowId`) when the library has it, else its text. */
  skill: { versionRowId: number | null; name: string; version: number; sha256: string; text: string | null } | null;
  condition: TrajectoryCondition | null;
  adapterKey: string | null;
  bundle: { id: string; sha256: string } | null;
  sampling: TrajectorySampling;
  messages: TrajectoryMessage[];
  verdict: Verdict | null;
  rating: { value: 'up' | 'down'; note: string | null; at: string } | null;
  details: Record<string, unknown>;
  createdAt: string;
}

interface Row {
  id: number;
  uid: string;
  source: TrajectorySource;
  skill_version_id: number | null;
  skill_name: string | null;
  skill_version: number | null;
  skill_sha256: string | null;
  skill_text: string | null;
  condition: TrajectoryCondition | null;
  adapter_key: string | null;
  bundle_name: string | null;
  bundle_sha256: string | null;
  sampling: string;
  messages: string;
  verdict: string | null;
  rating: 'up' | 'down' | null;
  rating_note: string | null;
  rated_at: string | null;
  details: string;
  created_at: string;
}

/** A stored row as the API shows it, and the skill text it ran with (null without a skill). */
export interface StoredTrajectory {
  rowId: number;
  trajectory: Trajectory;
  skillText: string | null;
}

/** The column values of a new row: one serializer, so an import can compare a line with a stored row. */
function columns(t: NewTrajectory) {
  return {
    uid: t.uid,
    source: t.source,
    skill_version_id: t.skill?.versionRowId ?? null,
    skill_name: t.skill?.name ?? null,
    skill_version: t.skill?.version ?? null,
    skill_sha256: t.skill?.sha256 ?? null,
    skill_text: t.skill && t.skill.versionRowId === null ? t.skill.text : null,
    condition: t.condition,
    adapter_key: t.adapterKey,
    bundle_name: t.bundle?.id ?? null,
    bundle_sha256: t.bundle?.sha256 ?? null,
    sampling: JSON.stringify(t.sampling),
    messages: JSON.stringify(t.messages),
    verdict: t.verdict ? JSON.stringify(t.verdict) : null,
    rating: t.rating?.value ?? null,
    rating_note: t.rating?.note ?? null,
    rated_at: t.rating?.at ?? null,
    details: JSON.stringify(t.details),
    created_at: t.createdAt,
  };
}

/** What makes two rows the same trajectory: everything but the rating and where the skill text lives. */
const CONTENT = [
  'source',
  'skill_name',
  'skill_version',
  'skill_sha256',
  'condition',
  'adapter_key',
  'bundle_name',
  'bundle_sha256',
  'sampling',
  'messages',
  'verdict',
  'details',
  'created_at',
] as const;

const SELECT = `SELECT t.*, COALESCE(t.skill_text, v.content) AS text FROM trajectories t LEFT JOIN skill_versions v ON v.id = t.skill_version_id`;

function parseColumn<T>(schema: z.ZodType<T>, text: string, what: string): T {
  const r = schema.safeParse(JSON.parse(text));
  if (!r.success)
    throw new StudioError(
      'internal',
      `trajectory ${what}: stored value does not fit its schema: ${r.error.issues[0]?.message}`,
    );
  return r.data;
}

const MessagesColumn = z.array(TrajectoryMessage);

function toStored(row: Row & { text: string | null }): StoredTrajectory {
  const where = `${row.uid}`;
  return {
    rowId: row.id,
    skillText: row.skill_name === null ? null : row.text,
    trajectory: {
      id: row.uid,
      createdAt: row.created_at,
      source: row.source,
      skill:
        row.skill_name === null
          ? null
          : {
              name: row.skill_name,
              version: row.skill_version!,
              sha256: row.skill_sha256!,
              linked: row.skill_version_id !== null,
            },
      condition: row.condition,
      adapter: row.adapter_key,
      bundle: row.bundle_name === null ? null : { id: row.bundle_name, sha256: row.bundle_sha256! },
      sampling: parseColumn(TrajectorySampling, row.sampling, `${where} sampling`),
      messages: parseColumn(MessagesColumn, row.messages, `${where} messages`),
      verdict: row.verdict === null ? null : parseColumn(Verdict, row.verdict, `${where} verdict`),
      rating:
        row.rating === null ? null : { value: row.rating, note: row.rating_note, at: row.rated_at ?? row.created_at },
      // JSON.parse keeps a "__proto__" key as an own property; z.record would drop it, so no copy here.
      details: JSON.parse(row.details) as Record<string, unknown>,
    },
  };
}

const preview = (text: string) => (text.length > 200 ? `${text.slice(0, 199)}…` : text);

export function summaryOf(t: Trajectory): TrajectorySummary {
  const { messages, details: _details, ...rest } = t;
  const last = (role: string) => [...messages].reverse().find((m) => m.role === role)?.content ?? '';
  return { ...rest, turns: messages.length, prompt: preview(last('user')), answer: preview(last('assistant')) };
}

export interface ExportFilter extends TrajectoryFilter {
  stage2?: boolean;
}

/** The WHERE clause of a filter, with named parameters. */
function where(f: ExportFilter): { sql: string; params: Record<string, unknown> } {
  const parts: string[] = [];
  const params: Record<string, unknown> = {};
  if (f.skill !== undefined) {
    parts.push('t.skill_name = @skill');
    params.skill = f.skill;
  }
  if (f.version !== undefined) {
    parts.push('t.skill_version = @version');
    params.version = f.version;
  }
  if (f.source !== undefined) {
    parts.push('t.source = @source');
    params.source = f.source;
  }
  if (f.rating === 'unrated') parts.push('t.rating IS NULL');
  else if (f.rating !== undefined) {
    parts.push('t.rating = @rating');
    params.rating = f.rating;
  }
  if (f.verdict === 'none') parts.push('t.verdict IS NULL');
  else if (f.verdict !== undefined)
    parts.push(`json_extract(t.verdict, '$.passed') = ${f.verdict === 'passed' ? 1 : 0}`);
  if (f.stage2) {
    // What stage 2 learns from: a skill, an assistant turn last, a success (rated up or passed), never rated down.
    parts.push('t.skill_name IS NOT NULL');
    parts.push(`json_extract(t.messages, '$[#-1].role') = 'assistant'`);
    parts.push(`(t.rating = 'up' OR (t.rating IS NULL AND json_extract(t.verdict, '$.passed') = 1))`);
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

export class TrajectoriesRepo {
  private readonly sql: {
    insert: Statement<ReturnType<typeof columns>>;
    byUid: Statement<[string], Row & { text: string | null }>;
    byPrefix: Statement<[string, string], Row & { text: string | null }>;
    rate: Statement<[string | null, string | null, string | null, number]>;
    linkedVersion: Statement<[string, number, string], { id: number }>;
  };

  constructor(private readonly db: Database) {
    const names = Object.keys(
      columns({
        uid: '',
        source: 'compare',
        skill: null,
        condition: null,
        adapterKey: null,
        bundle: null,
        sampling: {},
        messages: [],
        verdict: null,
        rating: null,
        details: {},
        createdAt: '',
      }),
    );
    this.sql = {
      insert: db.prepare(
        `INSERT INTO trajectories (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`,
      ),
      byUid: db.prepare(`${SELECT} WHERE t.uid = ?`),
      byPrefix: db.prepare(`${SELECT} WHERE t.uid >= ? AND t.uid <= ? ORDER BY t.uid LIMIT 2`),
      rate: db.prepare('UPDATE trajectories SET rating = ?, rating_note = ?, rated_at = ? WHERE id = ?'),
      linkedVersion: db.prepare(
        'SELECT v.id FROM skill_versions v JOIN skills s ON s.id = v.skill_id WHERE s.name = ? AND v.n = ? AND v.sha256 = ?',
      ),
    };
  }

  /** Writes the rows in one transaction; returns them as stored. */
  insert(rows: readonly NewTrajectory[]): Trajectory[] {
    return this.db
      .transaction(() =>
        rows.map((r) => {
          this.sql.insert.run(columns(r));
          return toStored(this.sql.byUid.get(r.uid)!).trajectory;
        }),
      )
      .immediate();
  }

  /** A uid or a unique prefix of one (≥ 6 hex digits). */
  get(ref: string): StoredTrajectory {
    const rows =
      ref.length === 32
        ? [this.sql.byUid.get(ref)].filter((r) => r !== undefined)
        : this.sql.byPrefix.all(ref, ref.padEnd(32, 'f'));
    if (rows.length === 0) throw new StudioError('not_found', `no trajectory "${ref}"`);
    if (rows.length > 1)
      throw new StudioError('invalid_input', `trajectory id "${ref}" is ambiguous; give more digits`);
    return toStored(rows[0]!);
  }

  /** Newest first. */
  list(filter: TrajectoryFilter, limit = 100, offset = 0): { total: number; items: Trajectory[] } {
    const w = where(filter);
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM trajectories t ${w.sql}`).get(w.params) as { n: number })
      .n;
    const rows = this.db
      .prepare(`${SELECT} ${w.sql} ORDER BY t.created_at DESC, t.id DESC LIMIT @limit OFFSET @offset`)
      .all({ ...w.params, limit, offset }) as (Row & { text: string | null })[];
    return { total, items: rows.map((r) => toStored(r).trajectory) };
  }

  /** Oldest first (the export order), one row at a time. */
  *iterate(filter: ExportFilter): Generator<StoredTrajectory> {
    const w = where(filter);
    const stmt = this.db.prepare(`${SELECT} ${w.sql} ORDER BY t.created_at, t.uid`);
    for (const row of stmt.iterate(w.params) as Iterable<Row & { text: string | null }>) yield toStored(row);
  }

  /** Sets or clears the rating; returns the row. */
  rate(ref: string, rating: { value: 'up' | 'down'; note: string | null; at: string } | null): Trajectory {
    return this.db
      .transaction(() => {
        const row = this.get(ref);
        this.sql.rate.run(rating?.value ?? null, rating?.note ?? null, rating?.at ?? null, row.rowId);
        return this.get(row.trajectory.id).trajectory;
      })
      .immediate();
  }

  /** The row id of skill version `name`@`version` when the library has it with this sha256. */
  linkedVersion(name: string, version: number, sha256: string): number | null {
    return this.sql.linkedVersion.get(name, version, sha256)?.id ?? null;
  }

  /**
   * An import, in one transaction: new uids are inserted; a uid already stored must hold the same
   * trajectory (else `conflict` naming the line, and nothing is written); a rating in the file that
   * differs from the stored one replaces it.
   */
  importBatch(rows: readonly { line: number; row: NewTrajectory; createdAtGiven: boolean }[]): {
    imported: number;
    unchanged: number;
    updated: number;
  } {
    return this.db
      .transaction(() => {
        let imported = 0;
        let unchanged = 0;
        let updated = 0;
        for (const { line, row, createdAtGiven } of rows) {
          const have = this.sql.byUid.get(row.uid);
          if (!have) {
            this.sql.insert.run(columns(row));
            imported++;
            continue;
          }
          const want = columns(row);
          // A line without created_at was given the import's time: only a line that has one is compared on it.
          const differs = CONTENT.filter((k) => want[k] !== have[k] && (k !== 'created_at' || createdAtGiven));
          if (differs.length) {
            throw new StudioError(
              'conflict',
              `line ${line}: trajectory ${row.uid} is already in the library with a different ${differs[0]!.replace(/_/g, ' ')}; nothing was imported`,
              { line, field: differs[0] },
            );
          }
          if (
            row.rating &&
            (row.rating.value !== have.rating ||
              row.rating.note !== have.rating_note ||
              row.rating.at !== have.rated_at)
          ) {
            this.sql.rate.run(row.rating.value, row.rating.note, row.rating.at, have.id);
            updated++;
          } else unchanged++;
        }
        return { imported, unchanged, updated };
      })
      .immediate();
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM trajectories').get() as { n: number }).n;
  }
}
