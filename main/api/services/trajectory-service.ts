// Trajectories for the API and the CLI: recording what compare, the Playground, verify and the
// OpenAI endpoint ran (when the `storeTrajectories` setting allows), listing, rating, and JSONL
// export/import in the stage-2 trainer's format (common/api/trajectory-schemas.ts TrajectoryLine).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, lstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  TrajectoryLine,
  samplingFromLine,
  samplingToLine,
  type Settings,
  type Trajectory,
  type TrajectoryAddInput,
  type TrajectoryCondition,
  type TrajectoryExportInput,
  type TrajectoryImportResult,
  type TrajectoryList,
  type TrajectoryListInput,
  type TrajectoryMessage,
  type TrajectorySampling,
  type TrajectorySource,
  type Verdict,
} from '../../../common/api/trajectory-schemas';
import { StudioError } from '../../../common/errors';
import { readGatedSync } from '../../files/read-gate';
import type { SettingsRepo } from '../../store/settings-repo';
import type { SkillsRepo } from '../../store/skills-repo';
import {
  summaryOf,
  type ExportFilter,
  type NewTrajectory,
  type StoredTrajectory,
  type TrajectoriesRepo,
} from '../../store/trajectories-repo';

/** What a run hands to `record`: the skill is a version in the library. */
export interface RecordInput {
  source: TrajectorySource;
  skill?: { name: string; version?: number } | null;
  condition?: TrajectoryCondition | null;
  adapterKey?: string | null;
  bundle?: { id: string; sha256: string } | null;
  sampling?: TrajectorySampling;
  messages: TrajectoryMessage[];
  verdict?: Verdict | null;
  details?: Record<string, unknown>;
}

const exists = (file: string) =>
  new StudioError('conflict', `${file} exists; not overwritten (pass --force, or overwrite: true in the API)`, {
    file,
  });

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const newUid = () => randomBytes(16).toString('hex');

/** One export line: the stage-2 fields first, then the rest, always every key (so the bytes round-trip). */
export function toLine(s: StoredTrajectory): string {
  const t = s.trajectory;
  return JSON.stringify({
    skill: t.skill?.name ?? null,
    skill_text: s.skillText,
    messages: t.messages,
    source: t.source,
    id: t.id,
    created_at: t.createdAt,
    skill_version: t.skill?.version ?? null,
    skill_sha256: t.skill?.sha256 ?? null,
    condition: t.condition,
    adapter: t.adapter,
    bundle: t.bundle,
    sampling: samplingToLine(t.sampling),
    verdict: t.verdict,
    rating: t.rating,
    details: t.details,
  });
}

export class TrajectoryService {
  constructor(
    private readonly repo: TrajectoriesRepo,
    private readonly skills: Pick<SkillsRepo, 'get' | 'versionRowId'>,
    private readonly settingsRepo: SettingsRepo,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  settings(): Settings {
    return this.settingsRepo.get();
  }

  setSettings(patch: Partial<Settings>): Settings {
    return this.settingsRepo.set(patch);
  }

  /**
   * Keeps runs as trajectories when the `storeTrajectories` setting is on; returns what it stored.
   * Never throws: a failed write is logged, because keeping a record must not fail the run it records.
   */
  record(rows: readonly RecordInput[]): Trajectory[] {
    try {
      if (rows.length === 0 || !this.settingsRepo.get().storeTrajectories) return [];
      return this.repo.insert(rows.map((r) => this.newRow(r)));
    } catch (err) {
      console.warn(
        `pskills: a ${rows[0]?.source ?? ''} trajectory was not stored: ${err instanceof Error ? err.message : String(err)}`,
      );
      return [];
    }
  }

  /** trajectories.add: stored whatever the setting says (the caller asked for it). */
  add(input: TrajectoryAddInput): Trajectory {
    return this.repo.insert([this.newRow({ ...input, adapterKey: input.adapter ?? null })])[0]!;
  }

  list(input: TrajectoryListInput): TrajectoryList {
    const { limit, offset, ...filter } = input;
    const page = this.repo.list(filter, limit ?? 100, offset ?? 0);
    return { total: page.total, items: page.items.map(summaryOf) };
  }

  show(input: { id: string }): Trajectory {
    return this.repo.get(input.id).trajectory;
  }

  rate(input: { id: string; rating: 'up' | 'down' | null; note?: string }): Trajectory {
    if (input.rating === null && input.note !== undefined)
      throw new StudioError(
        'invalid_input',
        'a note goes with a rating (up or down); clearing the rating clears its note',
      );
    const at = this.clock().toISOString();
    return this.repo.rate(
      input.id,
      input.rating === null ? null : { value: input.rating, note: input.note ?? null, at },
    );
  }

  /** The export, one JSONL line at a time (oldest first). */
  *lines(filter: ExportFilter): Generator<string> {
    for (const row of this.repo.iterate(filter)) yield toLine(row);
  }

  /**
   * Writes the export to a temporary file beside `file`, then moves it into place: a failure never
   * leaves half a file. A `file` that exists is refused, untouched, unless `overwrite`; without it the
   * move is a hard link, which fails when a file appeared meanwhile (docs/security.md).
   */
  export(input: TrajectoryExportInput): { file: string; count: number; bytes: number } {
    const { file, overwrite, ...filter } = input;
    const existing = lstatSync(file, { throwIfNoEntry: false });
    if (existing?.isDirectory()) throw new StudioError('invalid_input', `${file} is a folder; name a file`);
    if (existing && !existing.isFile() && !existing.isSymbolicLink())
      throw new StudioError('invalid_input', `${file} exists and is not a regular file; not replaced`);
    if (existing && !overwrite) throw exists(file);
    const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    let fd: number;
    try {
      fd = openSync(tmp, 'wx');
    } catch (err) {
      throw new StudioError('invalid_input', `cannot write ${file}: ${(err as Error).message}`);
    }
    let count = 0;
    let bytes = 0;
    try {
      for (const line of this.lines(filter)) {
        bytes += writeSync(fd, `${line}\n`);
        count++;
      }
      fsyncSync(fd);
      closeSync(fd);
      if (overwrite) renameSync(tmp, file);
      else {
        try {
          linkSync(tmp, file);
        } catch (err) {
          throw (err as NodeJS.ErrnoException).code === 'EEXIST' ? exists(file) : err;
        }
        rmSync(tmp, { force: true });
      }
    } catch (err) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      rmSync(tmp, { force: true });
      throw err;
    }
    return { file, count, bytes };
  }

  /** trajectories.import: the file's bytes through the read gate (main/files/read-gate.ts), checked whole before anything is written. */
  importFile(input: { file: string }): TrajectoryImportResult {
    const bytes = readGatedSync(input.file, 'trajectories JSONL');
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new StudioError('invalid_input', `${input.file} is not UTF-8 text`);
    }
    return this.importText(text);
  }

  /**
   * Every line is parsed and checked first; the first bad one is refused, named by its line number,
   * and nothing is written. Then one transaction writes them all (TrajectoriesRepo.importBatch).
   */
  importText(text: string): TrajectoryImportResult {
    const rows: { line: number; row: NewTrajectory; createdAtGiven: boolean }[] = [];
    const seen = new Map<string, number>();
    const now = this.clock().toISOString();
    text.split('\n').forEach((raw, i) => {
      const line = i + 1;
      const body = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (body.trim() === '') return;
      const fail = (why: string, details?: Record<string, unknown>): never => {
        throw new StudioError('invalid_input', `line ${line}: ${why}; nothing was imported`, { line, ...details });
      };
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch (err) {
        fail(`not JSON (${(err as Error).message})`);
      }
      const parsed = TrajectoryLine.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        fail(`${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`, {
          field: issue.path.join('.'),
        });
      }
      const row = this.fromLine(parsed.data!, body, now, fail);
      const first = seen.get(row.uid);
      if (first !== undefined) fail(`trajectory ${row.uid} is also on line ${first}`);
      seen.set(row.uid, line);
      rows.push({ line, row, createdAtGiven: parsed.data!.created_at !== undefined });
    });
    return this.repo.importBatch(rows);
  }

  private fromLine(l: TrajectoryLine, raw: string, now: string, fail: (why: string) => never): NewTrajectory {
    let skill: NewTrajectory['skill'] = null;
    if (l.skill !== null) {
      const text = l.skill_text!;
      const sha = sha256(text);
      if (l.skill_sha256 != null && l.skill_sha256 !== sha) fail('skill_sha256 is not the sha256 of skill_text');
      const versionRowId = this.repo.linkedVersion(l.skill, l.skill_version!, sha);
      skill = {
        versionRowId,
        name: l.skill,
        version: l.skill_version!,
        sha256: sha,
        text: versionRowId === null ? text : null,
      };
    }
    return {
      // A line without an id gets one from its bytes, so importing the same file twice adds nothing.
      uid: l.id ?? sha256(raw).slice(0, 32),
      source: l.source,
      skill,
      condition: l.condition ?? null,
      adapterKey: l.adapter ?? null,
      bundle: l.bundle ?? null,
      sampling: samplingFromLine(l.sampling ?? {}),
      messages: l.messages,
      verdict: l.verdict ?? null,
      rating: l.rating ?? null,
      details: l.details ?? {},
      createdAt: l.created_at ?? now,
    };
  }

  /** A new row from a run: its skill looked up in the library (not_found when it is not there). */
  private newRow(r: RecordInput): NewTrajectory {
    let skill: NewTrajectory['skill'] = null;
    if (r.skill) {
      const s = this.skills.get(r.skill.name, r.skill.version);
      const rowId = s && this.skills.versionRowId(r.skill.name, s.version.version);
      if (!s || !rowId)
        throw new StudioError(
          'not_found',
          `no skill "${r.skill.version ? `${r.skill.name}@${r.skill.version}` : r.skill.name}"`,
        );
      skill = { versionRowId: rowId, name: s.name, version: s.version.version, sha256: s.version.sha256, text: null };
    }
    return {
      uid: newUid(),
      source: r.source,
      skill,
      condition: r.condition ?? null,
      adapterKey: r.adapterKey ?? null,
      bundle: r.bundle ?? null,
      sampling: r.sampling ?? {},
      messages: r.messages,
      verdict: r.verdict ?? null,
      rating: null,
      details: r.details ?? {},
      createdAt: this.clock().toISOString(),
    };
  }
}
