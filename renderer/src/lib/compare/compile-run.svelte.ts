// One compile of a skill version into an adapter (adapters.compile): progress per encoder chunk,
// Cancel, and the result (adapter, rank, time, whether the library already had it).
import type { CompileProgress, CompileResult, SkillRef } from '../../../../common/api/adapter-schemas';
import type { StreamHandle } from '../../../../common/api/define';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

export type CompileStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export class CompileRun {
  status = $state<CompileStatus>('idle');
  progress = $state.raw<CompileProgress | null>(null);
  result = $state.raw<CompileResult | null>(null);
  error = $state.raw<UiError | null>(null);
  cancelling = $state(false);
  /** The version being (or last) compiled, as the page asked for it. */
  ref = $state.raw<SkillRef | null>(null);

  private handle: StreamHandle<CompileResult> | null = null;

  constructor(private readonly onCompiled: (result: CompileResult) => void) {}

  get running(): boolean {
    return this.status === 'running';
  }

  async start(ref: SkillRef): Promise<void> {
    if (this.running) return;
    this.status = 'running';
    this.ref = ref;
    this.progress = null;
    this.result = null;
    this.error = null;
    this.cancelling = false;
    const handle = studio.adapters.compile(ref, (event) => {
      this.progress = event;
    });
    this.handle = handle;
    try {
      this.result = await handle.result;
      this.status = 'done';
      this.onCompiled(this.result);
    } catch (err) {
      this.error = toUiError(err);
      this.status = this.error.code === 'cancelled' ? 'cancelled' : 'failed';
    } finally {
      this.handle = null;
      this.cancelling = false;
    }
  }

  cancel(): void {
    if (!this.handle) return;
    this.cancelling = true;
    this.handle.cancel();
  }
}
