// continual.run and continual.resume for the API (and so the CLI and the studio): wires the continual
// runner (main/continual/run.ts) to the studio's repositories and services, picks the summariser and
// keeps the run's status (running, cancelled, failed, done) in the store.
import type { ContinualEvent, ContinualRunInput, ContinualRunResult } from '../../../common/api/continual-schemas';
import { StudioError } from '../../../common/errors';
import { LlmSummariser } from '../../continual/llm-summariser';
import { endpointFromSettings } from '../../llm/chat-client';
import { runContinual, type ContinualDeps, type Summariser } from '../../continual/run';
import { templateLesson } from '../../continual/summarise';
import type { ContinualRepo, StoredContinualRun } from '../../store/continual-repo';

export const TEMPLATE_SUMMARISER: Summariser = {
  name: 'template',
  lesson: (input) => Promise.resolve(templateLesson(input)),
};

type Ctx = { emit(e: ContinualEvent): void; signal: AbortSignal };

export class ContinualService {
  constructor(
    private readonly deps: Omit<ContinualDeps, 'summariser' | 'fallback' | 'store'> & { store: ContinualRepo },
    private readonly settings: () => Record<string, unknown>,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  async run(input: ContinualRunInput, ctx: Ctx): Promise<ContinualRunResult> {
    this.summarisers(input); // a missing endpoint fails before a run is stored
    const { sha256 } = await this.deps.bundles.current();
    return this.drive(this.deps.store.create(input, sha256), ctx, false);
  }

  /** A stopped run (killed, cancelled, failed) goes on from its stored episodes; a done one is read back. */
  async resume(input: { run: string }, ctx: Ctx): Promise<ContinualRunResult> {
    const run = this.deps.store.get(input.run);
    const { sha256 } = await this.deps.bundles.current();
    if (run.bundleSha256 !== sha256)
      throw new StudioError(
        'conflict',
        `continual run ${run.id} ran with another bundle (sha256 ${run.bundleSha256.slice(0, 12)}); load that bundle to resume it`,
      );
    return this.drive(run, ctx, true);
  }

  private async drive(run: StoredContinualRun, ctx: Ctx, resumed: boolean): Promise<ContinualRunResult> {
    try {
      const result = await runContinual(run, { ...this.deps, ...this.summarisers(run.input) }, { ...ctx, resumed });
      this.deps.store.setStatus(run, 'done');
      return result;
    } catch (err) {
      const cancelled = err instanceof StudioError && err.code === 'cancelled';
      this.deps.store.setStatus(run, cancelled ? 'cancelled' : 'failed', cancelled ? null : (err as Error).message);
      throw err;
    }
  }

  private summarisers(input: ContinualRunInput): Pick<ContinualDeps, 'summariser' | 'fallback'> {
    const endpoint = endpointFromSettings(this.settings());
    if (input.summariser === 'llm' && !endpoint)
      throw new StudioError(
        'invalid_input',
        'summariser "llm": no endpoint is configured (settings llmBaseUrl and llmModel)',
      );
    // Asked for by name, the LLM's failure stops the run; chosen by default, the template takes over.
    const useLlm = endpoint && input.summariser !== 'template';
    const summariser = useLlm ? new LlmSummariser(endpoint, this.fetchFn) : TEMPLATE_SUMMARISER;
    return { summariser, ...(useLlm && input.summariser === undefined && { fallback: TEMPLATE_SUMMARISER }) };
  }
}
