// `pskills compile`: a skill version through the bundle's hypernetwork into a stored adapter.
import type { Command } from './command';
import { usageError } from './usage';

export const compileCommand: Command = {
  name: 'compile',
  usage: '<name>[@<n>] [--bundle DIR]',
  summary: "skill → adapter through the bundle's hypernetwork (cached)",
  async run(argv, { io, flags, withStudio, onInterrupt }) {
    const { values, positionals } = flags.parse(argv, { bundle: { type: 'string' } });
    if (positionals.length !== 1) throw usageError(compileCommand);
    const ref = flags.skillRef(positionals[0]!);
    const r = await withStudio(values, async (api) => {
      const handle = api.adapters.compile(ref, (p) => {
        if (!values.json && p.chunk > 0)
          io.err(`compiling ${p.skill.name}@${p.skill.version}: chunk ${p.chunk}/${p.chunks} (${p.tokens} tokens)`);
      });
      const off = onInterrupt(() => handle.cancel()); // nothing is stored for a cancelled compile
      try {
        return await handle.result;
      } finally {
        off();
      }
    });
    if (values.json)
      io.out(
        JSON.stringify({
          adapter: r.adapter.id,
          rank: r.rank,
          ms: Math.round(r.ms * 10) / 10,
          cached: r.cached,
          chunks: r.chunks,
          tokens: r.tokens,
        }),
      );
    else {
      const what = r.cached ? 'already compiled:' : 'compiled';
      io.out(
        `${what} ${r.skill.name}@${r.skill.version} → adapter ${r.adapter.id} (rank ${r.rank}, ${r.chunks} chunk${r.chunks === 1 ? '' : 's'} of ${r.tokens} tokens, ${r.ms.toFixed(0)} ms)`,
      );
    }
  },
};
