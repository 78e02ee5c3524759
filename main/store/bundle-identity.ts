// When a bundle.json that is new to the store is a model the store already holds (registerBundle
// then keeps the stored row, so its adapters, global adapter and runs stay usable).
import { canonicalJson } from './adapter-key';

const isTrainStepFile = (name: string) => name.startsWith('train_step');

/** What makes two bundle.json files the same model: everything but the entries of graphs derived from
 * lm.onnx, whose hash bundle.json also lists: encoder.onnx, and the train-step graphs with their
 * `train_step` entry (docs/bundle-format.md "train_step"), and the training card's top-level
 * `data_sets` record (docs/bundle-format.md "Training card"). */
export function modelIdentity(manifest: unknown): string {
  if (typeof manifest !== 'object' || manifest === null) return canonicalJson(manifest);
  const m = manifest as { files?: Record<string, unknown>; training_card?: unknown };
  const files = { ...(m.files ?? {}) };
  delete files['encoder.onnx'];
  for (const f of Object.keys(files)) if (isTrainStepFile(f)) delete files[f];
  // The distil recipe is how to train on the model, not the model: recorded or not, the same bundle.
  return canonicalJson({
    ...m,
    files,
    train_step: undefined,
    distill: undefined,
    training_card: withoutProvenance(m.training_card),
  });
}

/** The card without `data_sets` / `data_sets_note`: what the weights were trained on, recorded (even
 * after the run) so an eval can refuse those seeds; the weights are the same model with or without it. */
function withoutProvenance(card: unknown): unknown {
  if (typeof card !== 'object' || card === null || Array.isArray(card)) return card;
  const { data_sets: _sets, data_sets_note: _note, ...rest } = card as Record<string, unknown>;
  return rest;
}

const GRAPH_FILES = ['lm.onnx', 'lm.onnx.data', 'encoder.onnx'];

/** A re-export (`pskills_train.export.reexport`) writes the same weights into new graph files after
 * checking their logits against the old ones, and says so in `training_card.reexport`: then the graph
 * files, the format and the LoRA input layout may differ; everything else must not. */
export function reexportIdentity(manifest: unknown): string | null {
  const m = manifest as {
    files?: Record<string, unknown>;
    lora?: Record<string, unknown>;
    io?: { lm?: Record<string, unknown> };
    training_card?: Record<string, unknown>;
  } | null;
  if (!m || typeof m !== 'object') return null;
  const files = { ...(m.files ?? {}) };
  for (const f of GRAPH_FILES) delete files[f];
  for (const f of Object.keys(files)) if (isTrainStepFile(f)) delete files[f];
  const { reexport: _, ...card } = m.training_card ?? {};
  const io = { ...m.io, lm: { ...m.io?.lm, inputs: undefined } };
  return canonicalJson({
    ...m,
    format: undefined,
    distill: undefined,
    train_step: undefined,
    files,
    lora: { ...m.lora, groups: undefined },
    io,
    training_card: card,
  });
}

export const isReexport = (manifest: unknown) =>
  typeof (manifest as { training_card?: { reexport?: unknown } } | null)?.training_card?.reexport === 'object';
