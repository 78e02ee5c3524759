// The Models page without Svelte: the add-from-Hugging-Face form checked with the contract's schema,
// a card's lines, and the ModelShelf (list, activate, create with progress and Cancel) over the
// studio API, reporting snapshots so the .svelte.ts wrapper and the tests read the same state.
import type { StudioApi } from '../../../../common/api/contract';
import type { StreamHandle } from '../../../../common/api/define';
import {
  LORA_MODULES,
  ModelCreateInput,
  type BundleDtype,
  type LocalModel,
  type LoraModule,
  type ModelCard,
  type ModelCreateProgress,
  type ModelList,
} from '../../../../common/api/model-schemas';
import { formatBytes } from '../adapters/adapter-origin';
import { toUiError, type UiError } from '../shared/errors';
import { labelledIssue } from '../shared/field-words';

export interface CreateForm {
  /** hf: a checkpoint folder; gguf: a GGUF file (no hypernetwork: skills compile by distillation). */
  kind: 'hf' | 'gguf';
  source: string;
  dtype: BundleDtype;
  targets: LoraModule[];
  hypernet: 'none' | 'init';
  /** Empty: the checkpoint folder's name. */
  id: string;
}

export const emptyForm = (): CreateForm => ({
  kind: 'hf',
  source: '',
  dtype: 'fp32',
  targets: [...LORA_MODULES],
  hypernet: 'none',
  id: '',
});

const FIELD_LABELS: Record<string, string> = {
  source: 'Checkpoint folder',
  dtype: 'Weights',
  loraTargets: 'LoRA targets',
  hypernet: 'Hypernetwork',
  id: 'Bundle id',
};

/** The request the form makes, or the first problem named by its field's label. */
export function createInput(form: CreateForm): { input: ModelCreateInput } | { error: string } {
  const gguf = form.kind === 'gguf';
  const raw = {
    source: form.source.trim(),
    dtype: form.dtype,
    loraTargets: LORA_MODULES.filter((m) => form.targets.includes(m)),
    // A GGUF brings no hypernetwork, and none is made for it: its skills compile by distillation.
    ...(gguf ? {} : { hypernet: form.hypernet }),
    ...(form.id.trim() ? { id: form.id.trim() } : {}),
  };
  const labels = gguf ? { ...FIELD_LABELS, source: 'GGUF file' } : FIELD_LABELS;
  if (!raw.source)
    return {
      error: gguf
        ? `${labels.source}: give the path of a .gguf file`
        : `${labels.source}: give the folder of a Hugging Face checkpoint`,
    };
  const parsed = ModelCreateInput.safeParse(raw);
  if (parsed.success) return { input: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = String(issue.path[0] ?? '');
  return { error: labelledIssue(labels[field] ?? field, issue.message) };
}

/** The form filled to import a GGUF found in LM Studio's or Ollama's folder. */
export const formFor = (m: LocalModel): CreateForm => ({
  ...emptyForm(),
  kind: 'gguf',
  source: m.path,
  id: m.suggestedId,
});

export const APP_NAMES: Record<LocalModel['app'], string> = { lmstudio: 'LM Studio', ollama: 'Ollama' };

/** A found GGUF's line: family · parameters · quantization · context · template · size. */
export function localModelFacts(m: LocalModel): string {
  return [
    m.family,
    m.parameters !== null ? `${formatParameters(m.parameters)} parameters` : null,
    m.quantization,
    m.context !== null ? `${m.context.toLocaleString('en-US')} context` : null,
    m.chatTemplate !== null ? `${m.chatTemplate} template` : null,
    formatBytes(m.bytes),
  ]
    .filter((x): x is string => x !== null)
    .join(' · ');
}

/** "1.2 B", "494.0 M", "98.3 K" parameters. */
export function formatParameters(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} K`;
  return String(n);
}

/** The card as label/value rows, in the order the page shows them. */
export function cardRows(c: ModelCard): [string, string][] {
  return [
    ['Base model', `${c.family}${c.source ? ` (from ${c.source})` : ''}`],
    ['Parameters', formatParameters(c.parameters)],
    ...(c.quantization !== null
      ? [['Quantization', `${c.quantization} (dequantized to ${c.dtype})`] as [string, string]]
      : []),
    ['Layers × hidden', `${c.layers} × ${c.hidden} (${c.heads} heads, ${c.kvHeads} kv)`],
    ['Vocabulary', c.vocab.toLocaleString('en-US')],
    ['Context', `${c.maxPositions.toLocaleString('en-US')} tokens`],
    ['LoRA targets', `${c.loraTargets.join(', ')} (r ${c.rank}, α ${c.alpha})`],
    ['Weights', c.dtype],
    ['Chat template', c.chatTemplate ?? 'unreadable'],
    ['Size on disk', formatBytes(c.bytes)],
    ['Hypernetwork', c.hypernet ?? 'none: Instant is unavailable; skills compile by distillation'],
    ['Encoder graph', c.encoder ? 'encoder.onnx' : 'lm.onnx (full model)'],
  ];
}

export const progressFraction = (p: ModelCreateProgress | null): number => (p ? Math.min(1, p.step / p.steps) : 0);

export type CreateStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export interface ModelsSnapshot {
  list: ModelList | null;
  loading: boolean;
  error: UiError | null;
  /** The folder being made active, or null. */
  activating: string | null;
  createStatus: CreateStatus;
  progress: ModelCreateProgress | null;
  created: ModelCard | null;
  createError: UiError | null;
  cancelling: boolean;
}

export class ModelShelf {
  private s: ModelsSnapshot = {
    list: null,
    loading: false,
    error: null,
    activating: null,
    createStatus: 'idle',
    progress: null,
    created: null,
    createError: null,
    cancelling: false,
  };
  private handle: StreamHandle<ModelCard> | null = null;
  private seq = 0;

  constructor(
    private readonly api: Pick<StudioApi, 'models'>,
    private readonly report: (s: ModelsSnapshot) => void,
  ) {}

  get snapshot(): ModelsSnapshot {
    return this.s;
  }

  private set(patch: Partial<ModelsSnapshot>): void {
    this.s = { ...this.s, ...patch };
    this.report(this.s);
  }

  async refresh(): Promise<void> {
    const seq = ++this.seq;
    this.set({ loading: true });
    try {
      const list = await this.api.models.list({});
      if (seq === this.seq) this.set({ list, error: null });
    } catch (err) {
      if (seq === this.seq) this.set({ error: toUiError(err) });
    } finally {
      if (seq === this.seq) this.set({ loading: false });
    }
  }

  async activate(dir: string): Promise<void> {
    if (this.s.activating !== null) return;
    this.set({ activating: dir, error: null });
    try {
      const list = await this.api.models.activate({ dir });
      ++this.seq; // a list asked for before the switch is stale
      this.set({ list });
    } catch (err) {
      this.set({ error: toUiError(err) });
    } finally {
      this.set({ activating: null });
    }
  }

  /** Runs models.create for the form; a form problem is shown as an invalid_input error, unsent. */
  async create(form: CreateForm): Promise<void> {
    if (this.s.createStatus === 'running') return;
    const checked = createInput(form);
    if ('error' in checked) {
      this.set({ createStatus: 'failed', createError: { code: 'invalid_input', message: checked.error } });
      return;
    }
    this.set({ createStatus: 'running', progress: null, created: null, createError: null, cancelling: false });
    const handle = this.api.models.create(checked.input, (p) => this.set({ progress: p }));
    this.handle = handle;
    try {
      const created = await handle.result;
      this.set({ createStatus: 'done', created });
      await this.refresh();
    } catch (err) {
      const error = toUiError(err);
      this.set({ createStatus: error.code === 'cancelled' ? 'cancelled' : 'failed', createError: error });
    } finally {
      this.handle = null;
      this.set({ cancelling: false });
    }
  }

  cancel(): void {
    if (!this.handle) return;
    this.set({ cancelling: true });
    this.handle.cancel();
  }
}
