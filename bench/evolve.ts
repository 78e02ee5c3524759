// bench/evolve: the target "evolve raises the in-context verifier pass rate for at least 7 of 10
// SkillWorld test skills whose rule sits at the end of a ~2k-token skill (seeded, offline operators)".
// The Python package generates the SkillWorld test split (fixture filler, seed 0); the first 10 skills
// of the 2048-token bucket with depth `end` are saved in a fresh data folder with their tasks as
// verifier tests, and `evolve.run` (the code the studio and `pskills evolve` use) runs on each with the
// offline operators, scored in context only. Prints a table and writes bench/results/evolve.json.
// Run: nice -n 19 node --import tsx bench/evolve.ts [--bundle DIR] [--iterations 3] [--candidates 4]
//        [--skills 10] [--seed 0] [--max-tokens 48]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { studioContract } from '../common/api/contract';
import type { EvolveResult } from '../common/api/evolve-schemas';
import { createStudio } from '../main/api/root';
import { directClient } from '../main/api/transports/direct';
import { skillworldTests } from '../main/cli/verify';
import { requireTrainingPython } from '../main/training-venv';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

const { values } = parseArgs({
  options: {
    bundle: { type: 'string', default: DEFAULT_BUNDLE_DIR },
    iterations: { type: 'string', default: '3' },
    candidates: { type: 'string', default: '4' },
    skills: { type: 'string', default: '10' },
    seed: { type: 'string', default: '0' },
    'max-tokens': { type: 'string', default: '48' },
    out: { type: 'string', default: join(APP_ROOT, 'bench/results/evolve.json') },
  },
});
const iterations = Number(values.iterations);
const candidates = Number(values.candidates);
const wanted = Number(values.skills);
const seed = Number(values.seed);
const maxTokens = Number(values['max-tokens']);
const BUCKET = 2048;
const DEPTH = 'end';
// Test split crossing (docs/skillworld.md): 6 families, bucket and depth cycle every 15·6 = 90 skills,
// and (2048, end) is skills 66–71 of each cycle; 162 skills hold 12 of them.
const GENERATE_N = 162;
const FILLER = join(APP_ROOT, 'tests/fixtures/skillworld/filler');
const manifestBytes = readFileSync(join(values.bundle, 'bundle.json'));
const bundle = {
  dir: relative(APP_ROOT, values.bundle) || '.',
  id: (JSON.parse(manifestBytes.toString('utf8')) as { id: string }).id,
  sha256: createHash('sha256').update(manifestBytes).digest('hex'),
};

interface ManifestSkill {
  name: string;
  family: string;
  variant: string;
  length_bucket: number;
  depth: string;
  tokens: number;
  rule_at: number;
}

function generate(dir: string): ManifestSkill[] {
  const args = ['-m', 'pskills_train.skillworld', 'generate', '--split', 'test', '--n', String(GENERATE_N)];
  args.push('--seed', String(seed), '--out', dir, '--filler', FILLER);
  const r = spawnSync(requireTrainingPython(), args, { cwd: APP_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`skillworld generate exited with ${r.status}: ${r.stderr}`);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { skills: ManifestSkill[] };
  return manifest.skills.filter((s) => s.length_bucket === BUCKET && s.depth === DEPTH).slice(0, wanted);
}

const started = new Date().toISOString();
const world = join(mkdtempSync(join(tmpdir(), 'bench-evolve-world-')), 'world');
const dataDir = mkdtempSync(join(tmpdir(), 'bench-evolve-'));
const studio = createStudio({ dataDir, defaultBundleDir: values.bundle });
const api = directClient(studioContract, studio.dispatcher);
const rows: { skill: ManifestSkill; tests: number; result: EvolveResult; seconds: number }[] = [];
const t0 = performance.now();
const c0 = process.cpuUsage();
const best = (r: EvolveResult) => Math.max(r.baselineScore, ...r.iterations.map((i) => i.bestScore));
const raisedCount = () => rows.filter((r) => best(r.result) > r.result.baselineScore).length;
try {
  const picked = generate(world);
  if (picked.length < wanted) throw new Error(`only ${picked.length} skills of ${BUCKET} tokens with depth ${DEPTH}`);
  for (const skill of picked) {
    const content = readFileSync(join(world, 'skills', skill.name, 'SKILL.md'), 'utf8');
    await api.skills.save({ name: skill.name, content });
    const tests = skillworldTests(world, skill.name);
    await api.verify.setTests({ name: skill.name, tests });
    const ts = performance.now();
    const result = await api.evolve.run(
      { name: skill.name, iterations, candidates, seed, generator: 'offline', modes: ['in_context'], maxTokens },
      (e) => {
        if (e.type === 'iteration')
          process.stderr.write(`  ${skill.name} iteration ${e.iteration}: best ${e.bestScore.toFixed(3)}\n`);
      },
    ).result;
    rows.push({ skill, tests: tests.length, result, seconds: (performance.now() - ts) / 1000 });
    process.stderr.write(`${skill.name}: ${result.baselineScore.toFixed(3)} -> ${result.best.score.toFixed(3)}\n`);
    write(false); // after each skill, so a run stopped early still leaves what it measured
  }
} finally {
  await studio.dispose();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(join(world, '..'), { recursive: true, force: true });
}
write(true);
report();

function report(): void {
  console.log(
    `evolve, offline operators, in context: ${rows.length} SkillWorld test skills (bucket ${BUCKET}, rule at the ${DEPTH}), ${iterations} iterations × ${candidates} candidates, seed ${seed}`,
  );
  console.log(`bundle ${bundle.id} (bundle.json sha256 ${bundle.sha256.slice(0, 12)}, ${bundle.dir})`);
  console.log(['skill', 'family', 'tokens', 'rule_at', 'tests', 'baseline', 'best', 'raised'].join('\t'));
  for (const r of rows)
    console.log(
      [
        r.skill.name,
        r.skill.family,
        r.skill.tokens,
        r.skill.rule_at.toFixed(2),
        r.tests,
        r.result.baselineScore.toFixed(3),
        best(r.result).toFixed(3),
        best(r.result) > r.result.baselineScore ? 'yes' : 'no',
      ].join('\t'),
    );
  console.log(`raised: ${raisedCount()} of ${rows.length} (target: at least 7 of 10)`);
  console.log(`wrote ${values.out}`);
}

function write(complete: boolean): void {
  const cpu = process.cpuUsage(c0);
  const raised = raisedCount();
  const out = {
    bench: 'evolve',
    started,
    command: `nice -n 19 node --import tsx bench/evolve.ts --iterations ${iterations} --candidates ${candidates} --skills ${wanted} --seed ${seed} --max-tokens ${maxTokens}`,
    bundle,
    world: {
      split: 'test',
      n: GENERATE_N,
      seed,
      filler: 'tests/fixtures/skillworld/filler',
      bucket: BUCKET,
      depth: DEPTH,
    },
    settings: { iterations, candidates, generator: 'offline', modes: ['in_context'], max_tokens: maxTokens },
    machine: { cpu: cpus()[0]?.model ?? '', cores: cpus().length, load_average: loadavg() },
    complete,
    seconds: (performance.now() - t0) / 1000,
    cpu_seconds: (cpu.user + cpu.system) / 1e6,
    raised,
    target: { raised_at_least: 7, of: 10 },
    met: raised >= 7 && rows.length >= 10,
    skills: rows.map((r) => ({
      name: r.skill.name,
      family: r.skill.family,
      variant: r.skill.variant,
      tokens: r.skill.tokens,
      rule_at: r.skill.rule_at,
      tests: r.tests,
      baseline_pass_rate: r.result.baselineScore,
      best_pass_rate: best(r.result),
      raised: best(r.result) > r.result.baselineScore,
      iterations: r.result.iterations.map((i) => ({ candidate_scores: i.candidateScores, best_score: i.bestScore })),
      run: r.result.run.id,
      seconds: r.seconds,
    })),
  };
  const tmp = `${values.out}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(out, null, 1) + '\n');
  renameSync(tmp, values.out);
}
