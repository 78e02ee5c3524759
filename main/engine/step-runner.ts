// What every train step is, whichever kind (docs/bundle-format.md "train_step"): its bucket and the
// one interface the distillation loop runs. Kept apart so the layered runner and train-step.ts both
// import it without importing each other.
import type { BundleManifest, TrainStepEntry } from './manifest';
import type { Tensor } from './ort';

/** One static (batch, length) shape of the bundle's train step: kind "whole" names its graph in `file`,
 * kind "layered" its `layer`, `layer_vjp` and `head` graphs. */
export type Bucket = TrainStepEntry['buckets'][number];

/** A bucket's name in caches and messages. */
export function bucketKey(bucket: Pick<Bucket, 'batch' | 'length'>): string {
  return `${bucket.batch}x${bucket.length}`;
}

/** The train step's kind; absent in bundle.json = "whole". */
export function stepKind(manifest: BundleManifest): 'whole' | 'layered' {
  return manifest.train_step?.kind ?? 'whole';
}

/** One distillation step of one bucket, whichever kind: fed and answering by the whole graph's names
 * (`lora.*`, `m.*`, `v.*`, `step`, `lr`, the batch; `new_lora.*`, `new_m.*`, `new_v.*`, `loss`). */
export interface StepRunner {
  readonly kind: 'whole' | 'layered';
  readonly bucket: Bucket;
  run(feeds: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>>;
  dispose(): Promise<void>;
}
