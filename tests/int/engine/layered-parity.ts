// The tiny layered fixture's parity.json (written by its exporter with torch's two steps): the batch,
// the initial factors and the expected steps, as the layered step's tests read them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BundleManifest } from '../../../main/engine/manifest';
import { trainStepEntry, type TrainState } from '../../../main/engine/train-step';
import type { TrainBatch } from './train-batch';
import { APP_ROOT } from '../../../main/paths';

export const LAYERED_DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny-layered');

export interface Arr {
  dims: number[];
  data: number[];
}
export interface Parity {
  bucket: [number, number];
  step: number;
  lr: number;
  inputs: Record<string, Arr>;
  init: Record<string, Arr>;
  steps: { loss: number; factors: Record<string, Arr | number[]> }[];
}

export const readParity = (dir = LAYERED_DIR): Parity =>
  JSON.parse(readFileSync(join(dir, 'parity.json'), 'utf8')) as Parity;

const f32 = (a: Arr) => Float32Array.from(a.data);

/** The parity bucket of `m`, its batch and the initial state. */
export function parityRun(m: BundleManifest, parity: Parity) {
  const bucket = trainStepEntry(m).buckets.find((b) => b.batch === parity.bucket[0] && b.length === parity.bucket[1])!;
  const batch: TrainBatch = {
    inputIds: parity.inputs.input_ids!.data,
    attentionMask: parity.inputs.attention_mask!.data,
    positionIds: parity.inputs.position_ids!.data,
    answerMask: f32(parity.inputs.answer_mask!),
    teacherIds: parity.inputs.teacher_ids!.data,
    teacherLogp: f32(parity.inputs.teacher_logp!),
  };
  const state: TrainState = new Map(Object.entries(parity.init).map(([n, a]) => [n, f32(a)] as const));
  return { bucket, batch, state };
}
