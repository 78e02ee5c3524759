// Run by providers.int.test.ts in a child process (the Vulkan device WebGPU finds is chosen by the
// environment the process starts with): two layered train steps of the tiny layered fixture's parity
// batch on PROVIDER, printing the provider the layer graphs ran on, the losses and the factors as JSON.
import { loadBundle } from '../../../main/engine/bundle';
import type { Provider } from '../../../main/engine/ort';
import { openStepRunner, type TrainState } from '../../../main/engine/train-step';
import { runStep } from './train-batch';
import { parityRun, readParity } from './layered-parity';

const [dir, provider] = process.argv.slice(2) as [string, Provider];
const parity = readParity(dir);
const bundle = await loadBundle(dir);
const m = bundle.manifest;
const { bucket, batch, state: init } = parityRun(m, parity);
const logs: string[] = [];
const runner = await openStepRunner(dir, m, bucket, { provider, logger: (l) => logs.push(l) });
let state: TrainState = init;
const losses: number[] = [];
for (let j = 0; j < parity.steps.length; j++) {
  const res = await runStep(runner, m, state, batch, parity.step + j, parity.lr);
  state = res.state;
  losses.push(res.loss);
}
const used = (runner as { provider?: string }).provider ?? 'cpu';
const factors = Object.fromEntries([...state].filter(([n]) => n.startsWith('lora.')).map(([n, v]) => [n, [...v]]));
process.stdout.write(JSON.stringify({ used, logs, losses, factors }) + '\n');
await runner.dispose();
await bundle.dispose();
