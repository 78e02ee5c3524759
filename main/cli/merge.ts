// `pskills merge`: a new adapter from two or more (cat, svd; linear only as a baseline).
import type { Command } from './command';
import { usageError } from './usage';

export const mergeCommand: Command = {
  name: 'merge',
  usage: '<id> <id>… --method cat|linear|svd [--weights w,…] [--rank k] [--over-rank refuse|svd] [--rehearse steps]',
  summary: 'a new adapter from others (linear: baseline only)',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {
      method: { type: 'string' },
      weights: { type: 'string' },
      rank: { type: 'string' },
      rehearse: { type: 'string' },
      'over-rank': { type: 'string' },
    });
    const overRank = values['over-rank'];
    if (overRank !== undefined && overRank !== 'refuse' && overRank !== 'svd') throw usageError(mergeCommand);
    const method = values.method;
    if (positionals.length < 1 || (method !== 'cat' && method !== 'linear' && method !== 'svd'))
      throw usageError(mergeCommand);
    const weights = values.weights?.split(',').map((w) => flags.number(w, '--weights'));
    const rank = values.rank === undefined ? undefined : flags.integer(values.rank, '--rank');
    const rehearse = values.rehearse === undefined ? undefined : flags.integer(values.rehearse, '--rehearse');
    const { adapter, created } = await withStudio(values, (api) =>
      api.adapters.merge({ ids: positionals, method, weights, rank, rehearse, overRank }),
    );
    if (values.json) io.out(JSON.stringify({ adapter: adapter.id, rank: adapter.rank }));
    else io.out(`${created ? 'merged' : 'already in the library:'} ${adapter.id} (rank ${adapter.rank})`);
  },
};
