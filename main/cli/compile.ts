// `pskills compile`: a skill version through the bundle's hypernetwork into a stored adapter, or with
// --distill through its train-step graph (docs/bundle-format.md "train_step").
import type { DistillProgressEvent } from '../../common/api/adapter-schemas';
import type { Command } from './command';
import { usageError } from './usage';

/** `[#####.....] step 12/40 loss 0.734 ~18 s left` on one terminal line. */
function bar(p: DistillProgressEvent): string {
  if (p.phase === 'teacher') return `distilling ${p.skill.name}@${p.skill.version}: teacher pass…`;
  const width = 24;
  const done = Math.round((width * p.step) / p.steps);
  const left = p.secondsLeft === null ? '' : ` ~${Math.ceil(p.secondsLeft)} s left`;
  return `[${'#'.repeat(done)}${'.'.repeat(width - done)}] step ${p.step}/${p.steps} loss ${p.loss?.toFixed(3) ?? '-'}${left}`;
}

export const compileCommand: Command = {
  name: 'compile',
  usage: '<name>[@<n>] [--bundle DIR] [--distill [--steps K] [--from instant|zero]]',
  summary: "skill → adapter through the bundle's hypernetwork (cached), or distilled with --distill",
  async run(argv, { io, flags, withStudio, onInterrupt, untilDone }) {
    const { values, positionals } = flags.parse(argv, {
      bundle: { type: 'string' },
      distill: { type: 'boolean' },
      steps: { type: 'string' },
      from: { type: 'string' },
    });
    if (positionals.length !== 1) throw usageError(compileCommand);
    const ref = flags.skillRef(positionals[0]!);
    if (values.distill) {
      const steps = values.steps === undefined ? undefined : Number(values.steps);
      if (steps !== undefined && !(Number.isInteger(steps) && steps >= 1)) throw usageError(compileCommand);
      if (values.from !== undefined && values.from !== 'instant' && values.from !== 'zero')
        throw usageError(compileCommand);
      const from = values.from as 'instant' | 'zero' | undefined;
      const tty = !values.json && process.stderr.isTTY === true;
      const r = await withStudio(values, async (api) => {
        const handle = api.adapters.distill(
          { skill: ref, ...(steps ? { steps } : {}), ...(from ? { from } : {}) },
          (p) => {
            if (tty) process.stderr.write(`\r\x1b[2K${bar(p)}`);
          },
        );
        const off = onInterrupt(() => handle.cancel()); // nothing is stored for a cancelled distillation
        try {
          return await handle.result;
        } finally {
          off();
          if (tty) process.stderr.write('\r\x1b[2K');
        }
      });
      const finalLoss = r.losses.at(-1)!;
      if (values.json)
        io.out(
          JSON.stringify({
            adapter: r.adapter.id,
            kind: 'distilled',
            rank: r.rank,
            steps: r.steps,
            final_loss: finalLoss,
            seconds: Math.round(r.seconds * 10) / 10,
            teacher_seconds: Math.round(r.teacherSeconds * 10) / 10,
            questions: r.questions.length,
          }),
        );
      else
        io.out(
          `distilled ${r.skill.name}@${r.skill.version} → adapter ${r.adapter.id} (rank ${r.rank}, ${r.steps} steps on ${r.questions.length} practice questions, loss ${r.losses[0]!.toFixed(3)} → ${finalLoss.toFixed(3)}, ${r.seconds.toFixed(1)} s)`,
        );
      return;
    }
    const r = await withStudio(values, async (api) => {
      const handle = api.adapters.compile(ref, (p) => {
        if (!values.json && p.chunk > 0)
          io.err(`compiling ${p.skill.name}@${p.skill.version}: chunk ${p.chunk}/${p.chunks} (${p.tokens} tokens)`);
      });
      return untilDone(handle); // nothing is stored for a cancelled compile
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
