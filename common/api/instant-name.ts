// The one-pass adapter from the hypernetwork is `instant` on the wire and in storage (docs/api.md
// "Names"). Clients, files and rows from before said `parametric` (a condition or mode) or `compile`
// (a recipe kind): inputs still accept those and read them as `instant`; outputs say `instant`.
import { z } from 'zod';

/** The condition / mode name that `instant` replaced. */
export const OLD_INSTANT_CONDITION = 'parametric';
/** The recipe kind that `instant` replaced. */
export const OLD_INSTANT_KIND = 'compile';

/** `parametric` read as `instant`; any other value unchanged. */
export function instantCondition<T>(v: T | typeof OLD_INSTANT_CONDITION): T | 'instant' {
  return v === OLD_INSTANT_CONDITION ? 'instant' : v;
}

/** An enum of conditions or modes that also accepts the old `parametric` on input. */
export function acceptingOldInstant<E extends z.ZodEnum>(schema: E) {
  return z.preprocess((v: z.output<E> | typeof OLD_INSTANT_CONDITION) => instantCondition(v), schema);
}
