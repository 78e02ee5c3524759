// The train step without TrainLoop's kept buffers, for the parity tests: a batch as plain arrays and one
// step that returns a new state (main/engine/train-step.ts TrainLoop does the same in place).
import type { TeacherRow } from '../../../main/engine/distill-teacher';
import type { BundleManifest } from '../../../main/engine/manifest';
import { float32, floats, int64, type Tensor } from '../../../main/engine/ort';
import { trainStepEntry, type StepRunner, type TrainState } from '../../../main/engine/train-step';

/** Student rows and the teacher's top-k, row-major, exactly one bucket's shape. */
export interface TrainBatch {
  readonly inputIds: ArrayLike<number>; // [batch, length]
  readonly attentionMask: ArrayLike<number>; // [batch, length]
  readonly positionIds: ArrayLike<number>; // [batch, length]
  readonly answerMask: Float32Array; // [batch, length]
  readonly teacherIds: ArrayLike<number>; // [batch, length, k]
  readonly teacherLogp: Float32Array; // [batch, length, k]
}

/** Rows → one bucket's batch: left-padded (mask 0, positions from each row's first real token), rows
 * beyond the list all padding. */
export function packBatch(
  manifest: BundleManifest,
  rows: readonly TeacherRow[],
  batch: number,
  length: number,
): TrainBatch {
  const k = trainStepEntry(manifest).top_k;
  const pad = manifest.special_tokens.pad;
  const inputIds = new Array<number>(batch * length).fill(pad);
  const attentionMask = new Array<number>(batch * length).fill(0);
  const positionIds = new Array<number>(batch * length).fill(0);
  const answerMask = new Float32Array(batch * length);
  const teacherIds = new Array<number>(batch * length * k).fill(0);
  const teacherLogp = new Float32Array(batch * length * k).fill(Math.log(1 / k));
  rows.slice(0, batch).forEach((row, b) => {
    const off = length - row.ids.length; // left padding
    row.ids.forEach((id, t) => {
      inputIds[b * length + off + t] = id;
      attentionMask[b * length + off + t] = 1;
      positionIds[b * length + off + t] = t;
    });
    const n = row.topIds.length / k;
    for (let j = 0; j < n; j++) {
      const pos = b * length + off + row.answerFrom + j;
      answerMask[pos] = 1;
      for (let c = 0; c < k; c++) {
        teacherIds[pos * k + c] = row.topIds[j * k + c]!;
        teacherLogp[pos * k + c] = row.topLogp[j * k + c]!;
      }
    }
  });
  return { inputIds, attentionMask, positionIds, answerMask, teacherIds, teacherLogp };
}

const targets = (manifest: BundleManifest) =>
  manifest.lora.layers.flatMap((i) =>
    manifest.lora.targets.map((t) => ({ key: `${i}.${t.module}`, dIn: t.d_in, dOut: t.d_out })),
  );

/** One step of `runner` from `state` on `batch` (`step` 1-based): the new state (new arrays) and the loss
 * before the update. TrainLoop does the same without copying between steps. */
export async function runStep(
  runner: StepRunner,
  manifest: BundleManifest,
  state: TrainState,
  batch: TrainBatch,
  step: number,
  lr: number,
): Promise<{ state: TrainState; loss: number }> {
  const { batch: b, length: s } = runner.bucket;
  const k = trainStepEntry(manifest).top_k;
  const feeds: Record<string, Tensor> = {};
  const r = trainStepEntry(manifest).rank;
  for (const { key, dIn, dOut } of targets(manifest))
    for (const p of ['lora', 'm', 'v']) {
      feeds[`${p}.${key}.A`] = float32(state.get(`${p}.${key}.A`)!, [dIn, r]);
      feeds[`${p}.${key}.B`] = float32(state.get(`${p}.${key}.B`)!, [r, dOut]);
    }
  feeds.step = float32(new Float32Array([step]), []);
  feeds.lr = float32(new Float32Array([lr]), []);
  feeds.input_ids = int64(batch.inputIds, [b, s]);
  feeds.attention_mask = int64(batch.attentionMask, [b, s]);
  feeds.position_ids = int64(batch.positionIds, [b, s]);
  feeds.answer_mask = float32(batch.answerMask, [b, s]);
  feeds.teacher_ids = int64(batch.teacherIds, [b, s, k]);
  feeds.teacher_logp = float32(batch.teacherLogp, [b, s, k]);
  const out = await runner.run(feeds);
  const next = new Map<string, Float32Array>();
  for (const name of state.keys()) next.set(name, floats(out[`new_${name}`]!));
  return { state: next, loss: floats(out.loss!)[0]! };
}
