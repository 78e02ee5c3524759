// Adapter algebra run in the algebra worker for a service, its validation failures as input errors.
import { StudioError } from '../../../common/errors';
import type { AlgebraWorker } from '../../adapters/algebra-client';
import type { AlgebraArg, AlgebraOp, AlgebraResult } from '../../adapters/algebra-ops';
import { AdapterValidationError } from '../../adapters/validate';

/** Bad adapters and bad ranks are the caller's input, not studio bugs. */
function asInput(err: unknown): unknown {
  if (err instanceof AdapterValidationError || err instanceof RangeError)
    return new StudioError('invalid_input', err.message, { cause: err.message });
  return err;
}

/** Callers load their inputs fresh for the job, so they are moved, not copied (unless `transfer` is false). */
export function offThread<K extends AlgebraOp>(
  algebra: Pick<AlgebraWorker, 'run'>,
  op: K,
  arg: AlgebraArg<K>,
  transfer = true,
): Promise<AlgebraResult<K>> {
  return algebra.run(op, arg, { transfer }).catch((err: unknown) => {
    throw asInput(err);
  });
}
