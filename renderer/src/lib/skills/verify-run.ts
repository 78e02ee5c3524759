// The Tests tab's Verify: one verify.run of a skill version's stored tests with no adapter, the skill
// in context, its compiled adapter or a chosen one, streaming the compile's chunks and each test's
// outcome, with Cancel. Plain TypeScript with the API passed in (tested over the in-memory transport).
import type { StreamHandle } from '../../../../common/api/define';
import type { StudioApi } from '../../../../common/api/contract';
import type { VerifyMode, VerifyRunResult } from '../../../../common/api/verify-schemas';
import { toUiError, type UiError } from '../shared/errors';

export type VerifyStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

/** The Verify form's order: from no skill to the skill in the weights. */
export const VERIFY_MODE_CHOICES: readonly VerifyMode[] = ['none', 'in_context', 'instant', 'adapter'];

export const VERIFY_MODE_LABELS: Record<VerifyMode, string> = {
  none: 'No skill (base model)',
  in_context: 'Skill in context',
  instant: 'Instant adapter',
  adapter: 'A chosen adapter',
};

export interface VerifySnapshot {
  status: VerifyStatus;
  mode: VerifyMode;
  /** mode adapter: the adapter id */
  adapter: string | null;
  /** instant: the compile's chunks so far (null: not compiling, or compiled already). */
  compile: { chunk: number; chunks: number } | null;
  /** Tests the run answers (from its start event). */
  total: number | null;
  /** Outcomes as they arrive, by test index. */
  outcomes: Array<{ index: number; id: string; passed: boolean }>;
  result: VerifyRunResult | null;
  error: UiError | null;
  cancelling: boolean;
}

/** No run yet; a new run starts from it. */
const IDLE: VerifySnapshot = {
  status: 'idle',
  mode: 'instant',
  adapter: null,
  compile: null,
  total: null,
  outcomes: [],
  result: null,
  error: null,
  cancelling: false,
};

export class VerifyRun {
  private s: VerifySnapshot = IDLE;
  private handle: StreamHandle<VerifyRunResult> | null = null;

  constructor(
    private readonly api: Pick<StudioApi, 'verify'>,
    private readonly onChange: (s: VerifySnapshot) => void,
  ) {}

  get snapshot(): VerifySnapshot {
    return this.s;
  }

  /** Runs the version's stored tests; resolves when the run ends (done, cancelled or failed). */
  async start(
    skill: { name: string; version: number },
    mode: VerifyMode,
    adapter: string | null = null,
  ): Promise<void> {
    if (this.s.status === 'running') return;
    if (mode === 'adapter' && !adapter) {
      this.set({
        status: 'failed',
        mode,
        adapter,
        error: { code: 'invalid_input', message: 'pick an adapter to verify with' },
      });
      return;
    }
    this.set({ ...IDLE, status: 'running', mode, adapter: mode === 'adapter' ? adapter : null });
    const handle = this.api.verify.run({ ...skill, mode, ...(mode === 'adapter' && adapter && { adapter }) }, (e) => {
      if (e.type === 'compile') this.set({ compile: { chunk: e.chunk, chunks: e.chunks } });
      else if (e.type === 'start') this.set({ total: e.tests });
      else this.set({ outcomes: [...this.s.outcomes, { index: e.index, id: e.id, passed: e.passed }] });
    });
    this.handle = handle;
    try {
      const result = await handle.result;
      this.set({ status: 'done', result, cancelling: false });
    } catch (err) {
      const error = toUiError(err);
      this.set({ status: error.code === 'cancelled' ? 'cancelled' : 'failed', error, cancelling: false });
    } finally {
      this.handle = null;
    }
  }

  cancel(): void {
    if (!this.handle) return;
    this.set({ cancelling: true });
    this.handle.cancel();
  }

  private set(patch: Partial<VerifySnapshot>): void {
    this.s = { ...this.s, ...patch };
    this.onChange(this.s);
  }
}

/** The progress line and bar: the compile's chunks first (instant), then the answered tests. */
export function verifyProgress(s: VerifySnapshot): { text: string; fraction: number | null } {
  if (s.total !== null)
    return {
      text: `${s.outcomes.length} of ${s.total} tests answered`,
      fraction: s.total ? s.outcomes.length / s.total : 1,
    };
  if (s.compile) return { text: `Compiling: chunk ${s.compile.chunk} of ${s.compile.chunks}`, fraction: null };
  return { text: 'Starting…', fraction: null };
}
