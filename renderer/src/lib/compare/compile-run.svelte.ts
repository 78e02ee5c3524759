// One compile of a skill version into an adapter (adapters.compile): progress per encoder chunk,
// Cancel, and the result (adapter, rank, time, whether the library already had it).
import type { CompileProgress, CompileResult, SkillRef } from '../../../../common/api/adapter-schemas';
import { studio } from '../shared/bridge';
import { StreamRun } from '../shared/stream-run.svelte';

export class CompileRun extends StreamRun<CompileProgress, CompileResult> {
  /** The version being (or last) compiled, as the page asked for it. */
  ref = $state.raw<SkillRef | null>(null);

  constructor(private readonly onCompiled: (result: CompileResult) => void) {
    super();
  }

  async start(ref: SkillRef): Promise<void> {
    if (this.running) return;
    this.ref = ref;
    const result = await this.follow((onEvent) => studio.adapters.compile(ref, onEvent));
    if (result) this.onCompiled(result);
  }
}
