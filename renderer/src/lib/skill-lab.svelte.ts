// Compile and Compare of one skill, kept by StudioApp per skill name so a run survives leaving the
// Skill page and coming back.
import { CompareRun } from './compare-run.svelte';
import { CompileRun } from './compile-run.svelte';

export class SkillLab {
  readonly compile: CompileRun;
  readonly compare: CompareRun;

  /** onAdapters: a run ended that may have added adapters to the library. */
  constructor(
    readonly name: string,
    onAdapters: () => void,
  ) {
    this.compile = new CompileRun(onAdapters);
    this.compare = new CompareRun(onAdapters);
  }

  get busy(): boolean {
    return this.compile.running || this.compare.running;
  }

  dispose(): void {
    this.compile.cancel();
    this.compare.stop();
  }
}
