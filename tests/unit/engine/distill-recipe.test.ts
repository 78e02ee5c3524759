// The distil recipe has one source: a bundle's `distill` (written by the exporter from
// training/configs/distill.json), else that file; a bad recipe in bundle.json is refused by its field.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_RECIPE, recipeOf } from '../../../main/engine/distill-recipe';
import { parseManifest } from '../../../main/engine/manifest';
import { APP_ROOT } from '../../../main/paths';

const TINY = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train/bundle.json');
const tiny = () => JSON.parse(readFileSync(TINY, 'utf8')) as Record<string, unknown>;

describe('distil recipe', () => {
  it("is training/configs/distill.json when the bundle records none, the bundle's own when it does", () => {
    const file = JSON.parse(readFileSync(join(APP_ROOT, 'training/configs/distill.json'), 'utf8')) as unknown;
    expect(FILE_RECIPE).toEqual(file);
    const bare = parseManifest({ ...tiny(), distill: undefined });
    expect(recipeOf(bare)).toBe(FILE_RECIPE);
    const own = parseManifest({ ...tiny(), distill: { ...FILE_RECIPE, steps: 12, max_answer: 32 } });
    expect(recipeOf(own)).toMatchObject({ steps: 12, max_answer: 32, lr: FILE_RECIPE.lr });
  });

  it('a recipe with a step count of 0 or a negative lr is refused, naming the field', () => {
    expect(() => parseManifest({ ...tiny(), distill: { ...FILE_RECIPE, steps: 0 } })).toThrow(/distill\.steps/);
    expect(() => parseManifest({ ...tiny(), distill: { ...FILE_RECIPE, lr: -1 } })).toThrow(/distill\.lr/);
  });
});
