// npm test: every check, in order; all run even after a failure; non-zero exit if any failed.
import { run } from './lib.mjs';

const steps = [
  ['lint', 'npm', ['run', '-s', 'lint']],
  ['typecheck', 'npm', ['run', '-s', 'typecheck']],
  // The venv before vitest: the int suites that run the Python side (bundle create --from-hf, SkillWorld,
  // stage 2) skip without it, and a fresh clone (CI) has none until test:py makes it.
  ['venv', 'bash', ['training/setup_venv.sh']],
  ['vitest', 'npm', ['run', '-s', 'test:unit']],
  ['pytest', 'npm', ['run', '-s', 'test:py']],
  ['browser', 'npm', ['run', '-s', 'test:e2e']],
];
const only = process.argv.slice(2);
const results = [];
for (const [name, cmd, args] of steps) {
  if (only.length && !only.includes(name)) continue;
  console.log(`\n=== ${name} ===`);
  const t0 = Date.now();
  const code = await run(cmd, args);
  results.push({ name, ok: code === 0, s: ((Date.now() - t0) / 1000).toFixed(1) });
}
console.log('\n=== summary ===');
for (const r of results) console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}  (${r.s} s)`);
const failed = results.filter((r) => !r.ok).length;
console.log(`steps: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
