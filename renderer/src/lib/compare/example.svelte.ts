// "Try an example" (import.example): the first-run path of docs/guide.md. One click imports the
// SkillWorld example skills and opens one on the compare page with a held-out prompt; "Run the
// example" there distils the skill (a few seconds on the default bundle) and compares, and the
// prompt's checker marks each column. The loaded example is kept in the window's storage so that
// its guide is still on the compare page after a reload (docs/guide.md, "Try an example").
import { ExampleSet, type ExampleSkill } from '../../../../common/api/example-schemas';
import { studio } from '../shared/bridge';
import type { KeyValueStore } from '../shared/drafts';
import { toUiError, type UiError } from '../shared/errors';
import type { SkillLab } from './skill-lab.svelte';

export type ExampleStatus = 'idle' | 'loading' | 'ready' | 'failed';

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
    this.running = ref.name;
    this.runError = null;
    this.reused = null;
    try {
      await lab.distill.load(ref, null, true);
      const plan = lab.distill.plan;
      const stored = lab.distill.reusable;
      if (stored && !again) {
        lab.distill.mode = 'distilled';
        this.reused = stored.id;
        lab.compare.setDistilled(stored.id);
      } else if (plan?.available) {
        lab.distill.mode = 'distilled';
        await lab.distill.start(ref);
        if (lab.distill.status !== 'done') {
          this.runError = lab.distill.error;
          return;
        }
      }
      await lab.compare.start(ref);
    } catch (err) {
      this.runError = toUiError(err);
    } finally {
      this.running = null;
    }
  }
}
