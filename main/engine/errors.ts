// Engine errors are StudioErrors: they cross the API transports with a code and the named culprit.
import { StudioError, type ErrorCode } from '../../common/errors';

export class EngineError extends StudioError {
  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(code, message, details);
    this.name = 'EngineError';
  }
}

export const invalid = (message: string, details?: unknown) => new EngineError('invalid_input', message, details);
