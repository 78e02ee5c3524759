// Compile (instant or distilled) and Compare of one skill, kept by StudioApp per skill name so a run
// survives leaving the Skill page and coming back.
import { CompareRun } from './compare-run.svelte';
import { CompileRun } from './compile-run.svelte';
import { DistillRun } from './distill-run.svelte';

export class SkillLab {
  readonly compile: CompileRun;
  readonly compare: CompareRun;
  readonly distill: DistillRun;

  /** onAdapters: a run ended that may have added adapters to the library. */
  constructor(
    readonly name: string,
    onAdapters: () => void,
  ) {
    this.compile = new CompileRun(onAdapters);
    this.compare = new CompareRun(onAdapters);
    this.distill = new DistillRun((r) => {
      onAdapters();
      this.compare.setDistilled(r.adapter.id);
    });
  }

  get busy(): boolean {
    return this.compile.running || this.compare.running || this.distill.running;
  }

  dispose(): void {
    this.compile.cancel();
    this.compare.stop();
    this.distill.cancel();
  }
}
