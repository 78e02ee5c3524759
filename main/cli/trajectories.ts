// `pskills trajectories list|show|rate|export|import`: the runs the studio kept (compare, Playground,
// verify, the endpoint on request), and their JSONL form for the stage-2 trainer.
import { resolve } from 'node:path';
import {
  TRAJECTORY_SOURCES,
  type Trajectory,
  type TrajectoryFilter,
  type TrajectorySource,
  type TrajectorySummary,
} from '../../common/api/trajectory-schemas';
import { StudioError } from '../../common/errors';
import type { Command } from './command';
import type { CliContext } from './context';
import { usageError } from './usage';

const FILTER_USAGE = `[--skill NAME[@<n>]] [--source ${TRAJECTORY_SOURCES.join('|')}] [--rating up|down|unrated] [--verdict passed|failed|none]`;
const FILTER_OPTIONS = {
  skill: { type: 'string' },
  source: { type: 'string' },
  rating: { type: 'string' },
  verdict: { type: 'string' },
} as const;

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T))
    throw new StudioError('invalid_input', `--${flag}: "${value}" is not one of ${allowed.join(', ')}`);
  return value as T;
}

function filterOf(
  values: { skill?: string; source?: string; rating?: string; verdict?: string },
  flags: CliContext['flags'],
): TrajectoryFilter {
  const f: TrajectoryFilter = {};
  if (values.skill !== undefined) {
    const ref = flags.skillRef(values.skill);
    f.skill = ref.name;
    if (ref.version !== undefined) f.version = ref.version;
  }
  const source = oneOf<TrajectorySource>('source', values.source, TRAJECTORY_SOURCES);
  if (source) f.source = source;
  const rating = oneOf('rating', values.rating, ['up', 'down', 'unrated'] as const);
  if (rating) f.rating = rating;
  const verdict = oneOf('verdict', values.verdict, ['passed', 'failed', 'none'] as const);
  if (verdict) f.verdict = verdict;
  return f;
}

const skillText = (t: Pick<Trajectory, 'skill'>) => (t.skill ? `${t.skill.name}@${t.skill.version}` : '-');
const outcome = (t: Pick<Trajectory, 'verdict' | 'rating'>) =>
  [t.verdict ? (t.verdict.passed ? 'passed' : 'failed') : '', t.rating ? `rated ${t.rating.value}` : '']
    .filter(Boolean)
    .join(', ') || '-';
const oneLine = (s: string, n: number) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
};

export const trajectoriesList: Command = {
  name: 'trajectories list',
  usage: `${FILTER_USAGE} [--limit N] [--offset N]`,
  summary: 'kept runs, newest first: id, source, skill, condition, outcome, prompt',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {
      ...FILTER_OPTIONS,
      limit: { type: 'string' },
      offset: { type: 'string' },
    });
    if (positionals.length) throw usageError(trajectoriesList);
    const input = {
      ...filterOf(values, flags),
      ...(values.limit !== undefined && { limit: flags.integer(values.limit, '--limit', { min: 1, max: 1000 }) }),
      ...(values.offset !== undefined && { offset: flags.integer(values.offset, '--offset', { min: 0 }) }),
    };
    const page = await withStudio(values, (api) => api.trajectories.list(input));
    if (values.json) {
      io.out(JSON.stringify(page));
      return;
    }
    const row = (t: TrajectorySummary) =>
      [
        t.id.slice(0, 12),
        t.createdAt,
        t.source,
        skillText(t),
        t.condition ?? '-',
        outcome(t),
        oneLine(t.prompt, 60),
      ].join('\t');
    for (const t of page.items) io.out(row(t));
    io.err(`${page.items.length} of ${page.total}`);
  },
};

export const trajectoriesShow: Command = {
  name: 'trajectories show',
  usage: '<id>',
  summary: 'one trajectory: what it ran with, its messages, verdict and rating',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length !== 1) throw usageError(trajectoriesShow);
    const t = await withStudio(values, (api) => api.trajectories.show({ id: positionals[0]! }));
    if (values.json) {
      io.out(JSON.stringify(t));
      return;
    }
    io.out(`${t.id} ${t.source} ${t.createdAt}`);
    io.out(
      `skill ${skillText(t)}${t.skill && !t.skill.linked ? ' (not in this library)' : ''}, condition ${t.condition ?? '-'}, adapter ${t.adapter?.slice(0, 12) ?? '-'}, bundle ${t.bundle?.id ?? '-'}`,
    );
    io.out(`sampling ${JSON.stringify(t.sampling)}`);
    if (t.verdict)
      io.out(
        `verdict ${t.verdict.passed ? 'passed' : 'failed'}${t.verdict.test ? ` (test ${t.verdict.test})` : ''}${t.verdict.reason ? `: ${t.verdict.reason}` : ''}`,
      );
    if (t.rating) io.out(`rated ${t.rating.value} ${t.rating.at}${t.rating.note ? `: ${t.rating.note}` : ''}`);
    for (const m of t.messages) {
      io.out('');
      io.out(`== ${m.role}`);
      io.out(m.content);
    }
  },
};

export const trajectoriesRate: Command = {
  name: 'trajectories rate',
  usage: '<id> up|down|clear [--note TEXT]',
  summary: "sets or clears the user's rating of a trajectory",
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, { note: { type: 'string' } });
    if (positionals.length !== 2) throw usageError(trajectoriesRate);
    const value = oneOf('rating', positionals[1], ['up', 'down', 'clear'] as const)!;
    const input = {
      id: positionals[0]!,
      rating: value === 'clear' ? null : value,
      ...(values.note !== undefined && { note: values.note }),
    };
    const t = await withStudio(values, (api) => api.trajectories.rate(input));
    io.out(
      values.json ? JSON.stringify(t) : `${t.id.slice(0, 12)} ${t.rating ? `rated ${t.rating.value}` : 'not rated'}`,
    );
  },
};

export const trajectoriesExport: Command = {
  name: 'trajectories export',
  usage: `[--jsonl] [--out FILE [--force]] [--stage2] ${FILTER_USAGE}`,
  summary:
    'JSONL for the stage-2 trainer ({skill, skill_text, messages, source, …}), to FILE or stdout; --stage2: successes only',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {
      ...FILTER_OPTIONS,
      jsonl: { type: 'boolean', default: false },
      out: { type: 'string' },
      force: { type: 'boolean', default: false },
      stage2: { type: 'boolean', default: false },
    });
    if (positionals.length) throw usageError(trajectoriesExport);
    const filter = { ...filterOf(values, flags), ...(values.stage2 && { stage2: true }) };
    if (values.out === undefined) {
      // JSONL is the one format (--jsonl says so); on stdout, --json changes nothing.
      await withStudio(values, async (_api, studio) => {
        for (const line of studio.trajectories.lines(filter)) io.out(line);
      });
      return;
    }
    // An existing FILE is refused, untouched, unless --force (docs/security.md).
    const r = await withStudio(values, (api) =>
      api.trajectories.export({ ...filter, file: resolve(values.out!), ...(values.force && { overwrite: true }) }),
    );
    io.out(values.json ? JSON.stringify(r) : `${r.count} trajectories → ${r.file} (${r.bytes} bytes)`);
  },
};

export const trajectoriesImport: Command = {
  name: 'trajectories import',
  usage: 'FILE',
  summary: 'a JSONL export: every line checked first, a bad one named by its number and nothing imported',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length !== 1) throw usageError(trajectoriesImport);
    const r = await withStudio(values, (api) => api.trajectories.import({ file: resolve(positionals[0]!) }));
    io.out(
      values.json ? JSON.stringify(r) : `imported ${r.imported}, unchanged ${r.unchanged}, rating updated ${r.updated}`,
    );
  },
};
