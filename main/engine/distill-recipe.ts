// The distil recipe (steps, lr, batch, top-k, answer tokens, practice sources): bundle.json's `distill`,
// which the exporter writes from training/configs/distill.json, else that file itself (bundles made
// before the field). One source for Node and Python (docs/bundle-format.md "distill").
import fileRecipe from '../../training/configs/distill.json';
import type { BundleManifest } from './manifest';

export interface DistillRecipe {
  readonly steps: number;
  readonly lr: number;
  readonly batch: number;
  readonly ce_weight: number;
  readonly max_norm: number;
  readonly top_k: number;
  /** The answer cap, in tokens, of the teacher and every condition. */
  readonly max_answer: number;
  /** Practice questions a skill in the eval. */
  readonly questions: number;
  readonly sources: readonly string[];
  readonly synth_sources: readonly string[];
}

export const FILE_RECIPE: DistillRecipe = fileRecipe;

/** The bundle's recipe, or the file's for a bundle without one. */
export function recipeOf(m?: Pick<BundleManifest, 'distill'> | null): DistillRecipe {
  return m?.distill ?? FILE_RECIPE;
}
