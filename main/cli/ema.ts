// `pskills ema update|history|rollback`: the global adapter's versions for the current bundle.
import type { GlobalVersion } from '../../common/api/adapter-schemas';
import type { Command } from './command';
import { usageError } from './usage';

// Every ema subcommand has taken all three (--bundle chooses whose global adapter).
const OPTIONS = { beta: { type: 'string' }, rank: { type: 'string' }, bundle: { type: 'string' } } as const;

const versionText = (v: GlobalVersion) =>
  `v${v.version}\t${v.kind === 'rollback' ? `rollback to v${v.restoresVersion}` : `ema β=${v.beta}`}\tadapter ${v.adapter}\trank ${v.rank}\t${v.createdAt}`;

export const emaUpdate: Command = {
  name: 'ema update',
  usage: '<id> [--beta B] [--rank K]',
  summary: "the next global adapter version of the adapter's bundle",
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, OPTIONS);
    if (positionals.length !== 1) throw usageError(emaUpdate);
    const beta = values.beta === undefined ? undefined : flags.number(values.beta, '--beta');
    const rankBudget = values.rank === undefined ? undefined : flags.integer(values.rank, '--rank');
    const r = await withStudio(values, (api) => api.ema.update({ adapterId: positionals[0]!, beta, rankBudget }));
    io.out(
      values.json
        ? JSON.stringify({
            version: r.version.version,
            adapter: r.adapter.id,
            rank: r.adapter.rank,
            beta: r.version.beta,
          })
        : versionText(r.version),
    );
  },
};

export const emaHistory: Command = {
  name: 'ema history',
  usage: '[--bundle DIR]',
  summary: "the bundle's global adapter versions, newest first",
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, OPTIONS);
    if (positionals.length) throw usageError(emaHistory);
    const h = await withStudio(values, (api) => api.ema.history({}));
    if (values.json) io.out(JSON.stringify(h));
    else if (h.versions.length === 0) io.out(`no global adapter yet for bundle ${h.bundle.id}`);
    else for (const v of h.versions) io.out(versionText(v));
  },
};

export const emaRollback: Command = {
  name: 'ema rollback',
  usage: '<n> [--bundle DIR]',
  summary: 'appends a version that restores version n',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, OPTIONS);
    if (positionals.length !== 1) throw usageError(emaRollback);
    const version = flags.integer(positionals[0]!, 'version');
    const v = await withStudio(values, (api) => api.ema.rollback({ version }));
    io.out(values.json ? JSON.stringify(v) : versionText(v));
  },
};
