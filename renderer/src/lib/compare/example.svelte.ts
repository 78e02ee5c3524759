// "Try an example" (import.example): the first-run path of docs/guide.md. One click imports the
// SkillWorld example skills and opens one on the compare page with a held-out prompt; "Run the
// example" there distils the skill (a few seconds on the default bundle) and compares, and the
// prompt's checker marks each column. The loaded example is kept in the window's storage so that
// its guide is still on the compare page after a reload (docs/guide.md, "Try an example"). A run says
// what it is doing from its first moment (loading the model, the teacher pass, each step, comparing)
// and Cancel stops it in any of them.
import { ExampleSet, type ExampleSkill } from '../../../../common/api/example-schemas';
import { studio } from '../shared/bridge';
import type { KeyValueStore } from '../shared/drafts';
import { toUiError, type UiError } from '../shared/errors';
import type { SkillLab } from './skill-lab.svelte';

export type ExampleStatus = 'idle' | 'loading' | 'ready' | 'failed';
/** Where a run of the example is: getting the plan (the model loads, a step is timed), distilling, comparing. */
export type ExamplePhase = 'prepare' | 'distil' | 'compare';

const CANCELLED = new Error('cancelled');

/** `p`, or a rejection with CANCELLED as soon as `signal` aborts (the call itself goes on, its result unused). */
function unlessCancelled<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(CANCELLED);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(CANCELLED);
    signal.addEventListener('abort', stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

export const EXAMPLE_KEY = 'pskills.example';

/** The example as last loaded in this window, or null (none, unreadable, or from an older shape). */
export function savedExample(store: KeyValueStore | null): ExampleSet | null {
  try {
    const text = store?.getItem(EXAMPLE_KEY);
    if (!text) return null;
    const parsed = ExampleSet.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export class ExampleState {
  status = $state<ExampleStatus>('idle');
  set = $state.raw<ExampleSet | null>(null);
  error = $state.raw<UiError | null>(null);
  /** The skill whose "Run the example" is going (distil, then compare). */
  running = $state<string | null>(null);
  runError = $state.raw<UiError | null>(null);
  /** The stored distilled adapter the last run compared with instead of training again, or null. */
  reused = $state<string | null>(null);
  /** The running run's phase (null when none runs). */
  phase = $state<ExamplePhase | null>(null);
  cancelling = $state(false);
  /** What the last run's Cancel left, in words (null: it was not cancelled). */
  cancelled = $state<string | null>(null);

  private abort: AbortController | null = null;

  constructor(private readonly store: KeyValueStore | null = null) {
    const saved = savedExample(store);
    if (saved) {
      this.set = saved;
      this.status = 'ready';
    }
  }

  /** The example skill named `name`, once the example is loaded. */
  skill(name: string): ExampleSkill | null {
    return this.set?.skills.find((s) => s.name === name) ?? null;
  }

  async load(): Promise<ExampleSet | null> {
    if (this.status === 'loading') return null;
    this.status = 'loading';
    this.error = null;
    try {
      this.set = await studio.import.example({});
      this.status = 'ready';
      try {
        this.store?.setItem(EXAMPLE_KEY, JSON.stringify(this.set));
      } catch {
        // Storage full or switched off: the guide lasts until the page reloads, as before.
      }
      return this.set;
    } catch (err) {
      this.error = toUiError(err);
      this.status = 'failed';
      return null;
    }
  }

  /** Distils the version unless it has a stored distilled adapter on this bundle with the recipe a run
   *  would follow (then that one is used, and `reused` says so); `again` distils anyway. Then compares on
   *  the prompt already set. A failed distillation stops there with its error shown. */
  async run(lab: SkillLab, ref: { name: string; version: number }, again = false): Promise<void> {
    if (this.running) return;
    const abort = new AbortController();
    this.abort = abort;
    this.running = ref.name;
    this.runError = null;
    this.reused = null;
    this.cancelled = null;
    this.cancelling = false;
    this.phase = 'prepare';
    let trained = false;
    try {
      await unlessCancelled(lab.distill.load(ref, null, true), abort.signal);
      const plan = lab.distill.plan;
      const stored = lab.distill.reusable;
      if (stored && !again) {
        lab.distill.mode = 'distilled';
        this.reused = stored.id;
        lab.compare.setDistilled(stored.id);
      } else if (plan?.available) {
        lab.distill.mode = 'distilled';
        this.phase = 'distil';
        await lab.distill.start(ref);
        if (abort.signal.aborted || lab.distill.status === 'cancelled') throw CANCELLED;
        if (lab.distill.status !== 'done') {
          this.runError = lab.distill.error;
          return;
        }
        trained = true;
      }
      if (abort.signal.aborted) throw CANCELLED;
      this.phase = 'compare';
      await lab.compare.start(ref);
      if (abort.signal.aborted || lab.compare.status === 'cancelled') throw CANCELLED;
    } catch (err) {
      if (err === CANCELLED || abort.signal.aborted)
        this.cancelled =
          this.phase !== 'compare'
            ? 'Cancelled: nothing was trained or stored.'
            : `Cancelled: the comparison stopped${trained ? '; the distilled adapter it trained is kept' : ''}.`;
      else this.runError = toUiError(err);
    } finally {
      this.running = null;
      this.phase = null;
      this.cancelling = false;
      this.abort = null;
    }
  }

  /** Stops the running run wherever it is: before distillation starts, in it (nothing is stored), or while
   *  comparing. */
  cancel(lab: SkillLab): void {
    if (!this.abort || this.abort.signal.aborted) return;
    this.cancelling = true;
    this.abort.abort();
    lab.distill.cancel();
    lab.compare.stop();
  }
}
