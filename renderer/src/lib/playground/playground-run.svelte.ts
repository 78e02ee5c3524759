// One generation: tokens streamed as they arrive, Stop, and the final numbers. A stopped stream
// either rejects with code 'cancelled' (the API's dispatcher) or resolves with finishReason
// 'cancelled' (an engine that returns what it had); both end as status 'cancelled'.
import type { StreamHandle } from '../../../../common/api/define';
import type { GenerateInput, GenerateResult } from '../../../../common/api/engine-schemas';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

export type RunStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export interface OutputSegment {
  text: string;
  /** A control character, shown as its escape (`\x12`): random or byte-level tokens emit them. */
  control: boolean;
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /([\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f])/;

/** The text split into plain runs and single control characters (tabs, newlines and carriage returns stay plain). */
export function outputSegments(text: string): OutputSegment[] {
  return text
    .split(CONTROL)
    .filter((part) => part !== '')
    .map((part) =>
      CONTROL.test(part)
        ? { text: `\\x${part.charCodeAt(0).toString(16).padStart(2, '0')}`, control: true }
        : { text: part, control: false },
    );
}

export class GenerationRun {
  status = $state<RunStatus>('idle');
  /** The text so far: the streamed deltas, then the result's text once it finishes. */
  text = $state('');
  tokens = $state(0);
  result = $state.raw<GenerateResult | null>(null);
  error = $state.raw<UiError | null>(null);
  stopping = $state(false);

  private handle: StreamHandle<GenerateResult> | null = null;

  get running(): boolean {
    return this.status === 'running';
  }

  async start(input: GenerateInput): Promise<void> {
    if (this.running) return;
    this.status = 'running';
    this.text = '';
    this.tokens = 0;
    this.result = null;
    this.error = null;
    this.stopping = false;
    const handle = studio.engine.generate(input, (delta) => {
      this.text += delta.text;
      this.tokens += 1;
    });
    this.handle = handle;
    try {
      const result = await handle.result;
      this.result = result;
      this.text = result.text;
      this.status = result.finishReason === 'cancelled' ? 'cancelled' : 'done';
    } catch (err) {
      const error = toUiError(err);
      if (error.code === 'cancelled') this.status = 'cancelled';
      else {
        this.error = error;
        this.status = 'failed';
      }
    } finally {
      this.handle = null;
      this.stopping = false;
    }
  }

  /** Back to no run (a new chat); ignored while one runs. */
  reset(): void {
    if (this.running) return;
    this.status = 'idle';
    this.text = '';
    this.tokens = 0;
    this.result = null;
    this.error = null;
  }

  stop(): void {
    if (!this.handle) return;
    this.stopping = true;
    this.handle.cancel();
  }
}
