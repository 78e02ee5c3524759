// The train-step graph in onnxruntime-node against torch autograd on the same objective.py functions
// (tests/fixtures/bundle-tiny-train, training/scripts/make_fixture_train_step.py), and the parts around
// it: bucket choice, init states, and a bundle without the graph.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../../main/engine/bundle';
import { bucketFor, initState, stateAdapter, TrainStepGraph, trainStepEntry } from '../../../main/engine/train-step';
import { APP_ROOT } from '../../../main/paths';
import { FIXTURE_DIR } from './fixture';
import { runStep } from './train-batch';

const DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
interface TrainOracle {
  bucket: [number, number];
  inputs: Record<string, { dims: number[]; data: number[] }>;
  loss: number;
  new_lora: Record<string, number[]>;
}
const oracle: TrainOracle = JSON.parse(readFileSync(join(DIR, 'train_oracle.json'), 'utf8'));

describe('train_step graph', () => {
  it('one step equals torch autograd: updated factors within 1e-4, the same loss', async () => {
    const bundle = await loadBundle(DIR);
    const bucket = bucketFor(bundle.manifest, oracle.bucket[1])!;
    expect([bucket.batch, bucket.length]).toEqual(oracle.bucket);
    const graph = await TrainStepGraph.open(DIR, bundle.manifest, bucket);
    const f = (n: string) => Float32Array.from(oracle.inputs[n]!.data);
    const state = new Map(
      Object.keys(oracle.inputs)
        .filter((n) => /^(lora|m|v)\./.test(n))
        .map((n) => [n, f(n)] as const),
    );
    const { state: next, loss } = await runStep(
      graph,
      bundle.manifest,
      state,
      {
        inputIds: oracle.inputs.input_ids!.data,
        attentionMask: oracle.inputs.attention_mask!.data,
        positionIds: oracle.inputs.position_ids!.data,
        answerMask: f('answer_mask'),
        teacherIds: oracle.inputs.teacher_ids!.data,
        teacherLogp: f('teacher_logp'),
      },
      oracle.inputs.step!.data[0]!,
      oracle.inputs.lr!.data[0]!,
    );
    expect(Math.abs(loss - oracle.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(oracle.loss)));
    let worst = 0;
    for (const [out, want] of Object.entries(oracle.new_lora)) {
      const got = next.get(out.replace(/^new_/, ''))!;
      want.forEach((w, k) => (worst = Math.max(worst, Math.abs(got[k]! - w))));
    }
    expect(worst).toBeLessThanOrEqual(1e-4);
    await graph.dispose();
    await bundle.dispose();
  });

  it('zero init: A uniform within ±1/√d_in and seeded, B and the moments zero; an adapter fills its slots', async () => {
    const bundle = await loadBundle(DIR, { verifyHashes: false });
    const m = bundle.manifest;
    const r = trainStepEntry(m).rank;
    const a = initState(m, null, 3);
    const b = initState(m, null, 3);
    const A = a.get('lora.0.q.A')!;
    expect(A).toEqual(b.get('lora.0.q.A'));
    expect(Math.max(...A.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(m.lora.targets[0]!.d_in));
    expect(a.get('lora.0.q.B')!.every((x) => x === 0)).toBe(true);
    expect(a.get('m.0.q.A')!.every((x) => x === 0)).toBe(true);
    const from = stateAdapter(m, initState(m, null, 9));
    const seeded = initState(m, from, 3);
    expect(seeded.get('lora.1.down.A')).toEqual(from.targets.get('1.down')!.A);
    expect(r).toBe(m.lora.default_rank);
    expect(bucketFor(m, 17)).toBeNull();
    await bundle.dispose();
  });

  it('a bundle without train_step says so and offers Instant only', async () => {
    const bundle = await loadBundle(FIXTURE_DIR, { verifyHashes: false });
    expect(() => trainStepEntry(bundle.manifest)).toThrow(/no train-step graph.*Instant only/);
    await bundle.dispose();
  });
});
