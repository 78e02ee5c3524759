// `instant` is the one name for the hypernetwork's adapter (docs/api.md "Names"); requests, imported
// lines and stored recipes from before still say `parametric` or `compile`, and read as `instant`.
import { describe, expect, it } from 'vitest';
import { AdapterRecipe } from '../../../common/api/adapter-schemas';
import { CompareRunInput } from '../../../common/api/engine-schemas';
import { EvolveRunInput } from '../../../common/api/evolve-schemas';
import { TrajectoryAddInput, TrajectoryCondition } from '../../../common/api/trajectory-schemas';
import { VerifyMode, VerifyRunInput } from '../../../common/api/verify-schemas';

describe('the old names on input', () => {
  it('parametric reads as instant in compare, verify, evolve and trajectory inputs', () => {
    const compare = CompareRunInput.parse({ name: 'pdf', prompt: 'q', conditions: ['none', 'parametric'] });
    expect(compare.conditions).toEqual(['none', 'instant']);
    expect(VerifyRunInput.parse({ name: 'pdf', mode: 'parametric' }).mode).toBe('instant');
    expect(EvolveRunInput.parse({ name: 'pdf', iterations: 1, modes: ['parametric'] }).modes).toEqual(['instant']);
    const messages = [{ role: 'user', content: 'q' }];
    expect(TrajectoryAddInput.parse({ source: 'eval', condition: 'parametric', messages }).condition).toBe('instant');
  });

  it('the old and the new name together are one condition listed twice', () => {
    const r = CompareRunInput.safeParse({ name: 'pdf', prompt: 'q', conditions: ['instant', 'parametric'] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe('a condition is listed twice');
  });

  it('outputs name only instant; other names are still refused', () => {
    expect(VerifyMode.safeParse('parametric').success).toBe(false);
    expect(TrajectoryCondition.safeParse('parametric').success).toBe(false);
    expect(VerifyRunInput.safeParse({ name: 'pdf', mode: 'weights' }).success).toBe(false);
  });

  it('a recipe of kind compile reads as instant; a wrong one still fails', () => {
    const old = { kind: 'compile', hypernet: 't2l', combine: 'mean' };
    expect(AdapterRecipe.parse(old)).toEqual({ kind: 'instant', hypernet: 't2l', combine: 'mean' });
    expect(AdapterRecipe.safeParse({ ...old, hypernet: 'other' }).success).toBe(false);
    expect(AdapterRecipe.parse({ kind: 'import', tensorsSha256: 'a'.repeat(64) }).kind).toBe('import');
  });
});
