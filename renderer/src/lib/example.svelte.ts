// "Try an example" (import.example): the first-run path of docs/guide.md. One click imports the
// SkillWorld example skills and opens one on the compare page with a held-out prompt; "Run the
// example" there distils the skill (a few seconds on the default bundle) and compares, and the
// prompt's checker marks each column.
import type { ExampleSet, ExampleSkill } from '../../../common/api/example-schemas';
import { studio } from './bridge';
import { toUiError, type UiError } from './errors';
import type { SkillLab } from './skill-lab.svelte';

export type ExampleStatus = 'idle' | 'loading' | 'ready' | 'failed';

export class ExampleState {
  status = $state<ExampleStatus>('idle');
  set = $state.raw<ExampleSet | null>(null);
  error = $state.raw<UiError | null>(null);
  /** The skill whose "Run the example" is going (distil, then compare). */
  running = $state<string | null>(null);
  runError = $state.raw<UiError | null>(null);

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
      return this.set;
    } catch (err) {
      this.error = toUiError(err);
      this.status = 'failed';
      return null;
    }
  }

  /** Distils the version when it has no distilled adapter on this bundle (and the bundle can), then
   *  compares on the prompt already set. A failed distillation stops there with its error shown. */
  async run(lab: SkillLab, ref: { name: string; version: number }): Promise<void> {
    if (this.running) return;
    this.running = ref.name;
    this.runError = null;
    try {
      await lab.distill.load(ref, null);
      const plan = lab.distill.plan;
      if (plan?.available && !plan.distilled && lab.compare.distilled === null) {
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
