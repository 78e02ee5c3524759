// npm test: every check, in order; all run even after a failure; non-zero exit if any failed. The summary
// lists every skipped test with its reason: pytest's from training/tests/conftest.py (PSKILLS_SKIPS_FILE),
// vitest's from its JSON report (a skipped suite's title says what it needs, e.g. "(needs training/.venv)").
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './lib.mjs';

const reports = mkdtempSync(join(tmpdir(), 'pskills-test-'));
const pySkips = join(reports, 'pytest-skips.jsonl');
const vitestJson = join(reports, 'vitest.json');

const steps = [
  ['lint', 'npm', ['run', '-s', 'lint']],
  ['typecheck', 'npm', ['run', '-s', 'typecheck']],
  // The venv before vitest: the int suites that run the Python side (bundle create --from-hf, SkillWorld,
  // stage 2) skip without it, and a fresh clone (CI) has none until test:py makes it.
  ['venv', 'bash', ['training/setup_venv.sh']],
  [
    'vitest',
    'npm',
    ['run', '-s', 'test:unit', '--', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`],
  ],
  ['pytest', 'npm', ['run', '-s', 'test:py'], { env: { ...process.env, PSKILLS_SKIPS_FILE: pySkips } }],
  ['browser', 'npm', ['run', '-s', 'test:e2e']],
];
const only = process.argv.slice(2);
const results = [];
for (const [name, cmd, args, opts] of steps) {
  if (only.length && !only.includes(name)) continue;
  console.log(`\n=== ${name} ===`);
  const t0 = Date.now();
  const code = await run(cmd, args, opts);
  results.push({ name, ok: code === 0, s: ((Date.now() - t0) / 1000).toFixed(1) });
}
/** [test, reason] of every skipped test the two runners reported. */
function skipped() {
  const out = [];
  if (existsSync(pySkips)) {
    for (const line of readFileSync(pySkips, 'utf8').split('\n').filter(Boolean)) {
      const s = JSON.parse(line);
      out.push([`pytest ${s.test}`, s.reason]);
    }
  }
  if (existsSync(vitestJson)) {
    for (const file of JSON.parse(readFileSync(vitestJson, 'utf8')).testResults ?? []) {
      for (const t of file.assertionResults ?? []) {
        if (!['skipped', 'pending', 'todo'].includes(t.status)) continue;
        const where = file.name.replace(`${process.cwd()}/`, '');
        const needs = /\((needs [^)]*)\)/.exec(t.fullName)?.[1];
        out.push([`vitest ${where} > ${t.fullName}`, needs ?? 'its skipIf condition held (the test names no reason)']);
      }
    }
  }
  return out;
}

console.log('\n=== summary ===');
const skips = skipped();
for (const [test, reason] of skips) console.log(`SKIP  ${test}: ${reason}`);
if (skips.length) console.log(`skipped: ${skips.length} tests`);
for (const r of results) console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}  (${r.s} s)`);
const failed = results.filter((r) => !r.ok).length;
console.log(`steps: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
