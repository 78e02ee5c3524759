// Teacher rows → the train-step graph's batch buffers, and the bucket a distillation would run in.
import { chatOf, type PracticeQuestion } from '../../common/distill/practice';
import type { BundleInfo } from './bundle';
import type { TeacherRow } from './distill-teacher';
import { recipeOf } from './distill-recipe';
import type { BundleManifest } from './manifest';
import { bucketFor, stepBuckets, trainStepEntry, type BatchBuffers, type Bucket } from './train-step';

/** Rows → one bucket's buffers, written in place (every element): left-padded (mask 0, positions from each
 * row's first real token), rows beyond the list all padding. */
export function fillBatch(manifest: BundleManifest, rows: readonly TeacherRow[], buf: BatchBuffers): void {
  const k = trainStepEntry(manifest).top_k;
  const { batch, length } = buf;
  buf.inputIds.fill(BigInt(manifest.special_tokens.pad));
  buf.attentionMask.fill(0n);
  buf.positionIds.fill(0n);
  buf.answerMask.fill(0);
  buf.teacherIds.fill(0n);
  buf.teacherLogp.fill(Math.log(1 / k));
  for (let b = 0; b < Math.min(batch, rows.length); b++) {
    const row = rows[b]!;
    const off = b * length + length - row.ids.length; // left padding
    for (let t = 0; t < row.ids.length; t++) {
      buf.inputIds[off + t] = BigInt(row.ids[t]!);
      buf.attentionMask[off + t] = 1n;
      buf.positionIds[off + t] = BigInt(t);
    }
    const n = row.topIds.length / k;
    const at = off + row.answerFrom;
    buf.answerMask.fill(1, at, at + n);
    for (let c = 0; c < n * k; c++) buf.teacherIds[at * k + c] = BigInt(row.topIds[c]!);
    buf.teacherLogp.set(row.topLogp, at * k);
  }
}
/** The bucket a distillation of these questions would most likely run in: the longest student prompt
 * plus a full teacher answer (an upper bound: answers that end early pick a smaller bucket). */
export function estimateBucket(
  bundle: Pick<BundleInfo, 'manifest' | 'tokenizer' | 'chat'>,
  questions: readonly PracticeQuestion[],
  maxAnswerTokens = recipeOf(bundle.manifest).max_answer,
): Bucket {
  const m = bundle.manifest;
  const longest = Math.max(1, ...questions.map((q) => bundle.tokenizer.encode(bundle.chat.render(chatOf(q))).length));
  return bucketFor(m, longest + maxAnswerTokens) ?? stepBuckets(m).at(-1)!;
}
