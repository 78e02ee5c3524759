// continual.run for the API (and so the CLI and the studio): wires the continual runner
// (main/continual/run.ts) to the studio's repositories and services, and picks the summariser.
import type { ContinualEvent, ContinualRunInput, ContinualRunResult } from '../../../common/api/continual-schemas';
import { StudioError } from '../../../common/errors';
import { endpointFromSettings, LlmSummariser } from '../../continual/llm-summariser';
import { runContinual, type ContinualDeps, type Summariser } from '../../continual/run';
import { templateLesson } from '../../continual/summarise';

export const TEMPLATE_SUMMARISER: Summariser = {
  name: 'template',
  lesson: (input) => Promise.resolve(templateLesson(input)),
};

export class ContinualService {
  constructor(
    private readonly deps: Omit<ContinualDeps, 'summariser' | 'fallback'>,
    private readonly settings: () => Record<string, unknown>,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  async run(
    input: ContinualRunInput,
    ctx: { emit(e: ContinualEvent): void; signal: AbortSignal },
  ): Promise<ContinualRunResult> {
    const endpoint = endpointFromSettings(this.settings());
    if (input.summariser === 'llm' && !endpoint)
      throw new StudioError(
        'invalid_input',
        'summariser "llm": no endpoint is configured (settings llmBaseUrl and llmModel)',
      );
    // Asked for by name, the LLM's failure stops the run; chosen by default, the template takes over.
    const useLlm = endpoint && input.summariser !== 'template';
    const summariser = useLlm ? new LlmSummariser(endpoint, this.fetchFn) : TEMPLATE_SUMMARISER;
    return runContinual(
      input,
      { ...this.deps, summariser, ...(useLlm && input.summariser === undefined && { fallback: TEMPLATE_SUMMARISER }) },
      ctx,
    );
  }
}
