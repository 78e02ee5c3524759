// Run by providers.int.test.ts in a child process (the Vulkan device WebGPU finds is chosen by the
// environment the process starts with): two layered train steps of the tiny layered fixture's parity
// batch on PROVIDER, printing the provider the layer graphs ran on, the losses and the factors as JSON.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBundle } from '../../../main/engine/bundle';
import type { Provider } from '../../../main/engine/ort';
import { openStepRunner, runStep, trainStepEntry, type TrainState } from '../../../main/engine/train-step';

interface Arr {
  dims: number[];
  data: number[];
}
const [dir, provider] = process.argv.slice(2) as [string, Provider];
const parity = JSON.parse(readFileSync(join(dir, 'parity.json'), 'utf8')) as {
  bucket: [number, number];
  step: number;
  lr: number;
  inputs: Record<string, Arr>;
  init: Record<string, Arr>;
  steps: unknown[];
};
const bundle = await loadBundle(dir);
const m = bundle.manifest;
const bucket = trainStepEntry(m).buckets.find((b) => b.batch === parity.bucket[0] && b.length === parity.bucket[1])!;
const logs: string[] = [];
const runner = await openStepRunner(dir, m, bucket, { provider, logger: (l) => logs.push(l) });
const f = (a: Arr) => Float32Array.from(a.data);
const batch = {
  inputIds: parity.inputs.input_ids!.data,
  attentionMask: parity.inputs.attention_mask!.data,
  positionIds: parity.inputs.position_ids!.data,
  answerMask: f(parity.inputs.answer_mask!),
  teacherIds: parity.inputs.teacher_ids!.data,
  teacherLogp: f(parity.inputs.teacher_logp!),
};
let state: TrainState = new Map(Object.entries(parity.init).map(([n, a]) => [n, f(a)] as const));
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
