// `pskills merge`: a new adapter from two or more (cat, svd; linear only as a baseline); with --rehearse,
// the rehearsal's steps on stderr as `compile --distill` shows them, and Ctrl-C stops it storing nothing.
import type { MergeProgress } from '../../common/api/adapter-schemas';
import type { Command } from './command';
import { usageError } from './usage';

/** `[#####.....] rehearsal step 12/40 loss 0.734 ~18 s left` on one terminal line. */
function bar(p: MergeProgress): string {
  if (p.phase === 'merge') return `merged; rehearsing ${p.steps} steps…`;
  if (p.phase === 'teacher') return 'rehearsal: teacher pass…';
  const width = 24;
  const done = Math.round((width * p.step) / p.steps);
  const left = p.secondsLeft === null ? '' : ` ~${Math.ceil(p.secondsLeft)} s left`;
  return `[${'#'.repeat(done)}${'.'.repeat(width - done)}] rehearsal step ${p.step}/${p.steps} loss ${p.loss?.toFixed(3) ?? '-'}${left}`;
}

export const mergeCommand: Command = {
  name: 'merge',
  usage:
    '<id> <id>… --method cat|linear|svd [--weights w,…] [--rank k] [--over-rank refuse|svd] [--rehearse steps] [--bundle DIR]',
  summary: 'a new adapter from others (linear: baseline only)',
  async run(argv, { io, flags, withStudio, onInterrupt }) {
    const { values, positionals } = flags.parse(argv, {
      method: { type: 'string' },
      weights: { type: 'string' },
      rank: { type: 'string' },
      rehearse: { type: 'string' },
      'over-rank': { type: 'string' },
      bundle: { type: 'string' },
    });
    const overRank = values['over-rank'];
    if (overRank !== undefined && overRank !== 'refuse' && overRank !== 'svd') throw usageError(mergeCommand);
    const method = values.method;
    if (positionals.length < 1 || (method !== 'cat' && method !== 'linear' && method !== 'svd'))
      throw usageError(mergeCommand);
    const weights = values.weights?.split(',').map((w) => flags.number(w, '--weights'));
    const rank = values.rank === undefined ? undefined : flags.integer(values.rank, '--rank');
    const rehearse = values.rehearse === undefined ? undefined : flags.integer(values.rehearse, '--rehearse');
    const tty = !values.json && process.stderr.isTTY === true;
    const { adapter, created } = await withStudio(values, async (api) => {
      const handle = api.adapters.merge({ ids: positionals, method, weights, rank, rehearse, overRank }, (p) => {
        // On a terminal, one line redrawn; elsewhere one line when the rehearsal starts (Ctrl-C stops it).
        if (tty) process.stderr.write(`\r\x1b[2K${bar(p)}`);
        else if (p.phase === 'merge' && p.steps > 0 && !values.json) io.err(bar(p));
      });
      const off = onInterrupt(() => handle.cancel()); // a cancelled merge stores nothing
      try {
        return await handle.result;
      } finally {
        off();
        if (tty) process.stderr.write('\r\x1b[2K');
      }
    });
    if (values.json) io.out(JSON.stringify({ adapter: adapter.id, rank: adapter.rank }));
    else io.out(`${created ? 'merged' : 'already in the library:'} ${adapter.id} (rank ${adapter.rank})`);
  },
};
