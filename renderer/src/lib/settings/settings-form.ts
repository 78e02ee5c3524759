// The Settings page's form over settings.get / settings.set: what is typed, each field checked with
// the contract's own zod schema (common/api/trajectory-schemas.ts), and only changed keys sent.
// Plain TypeScript taking the API in its constructor, so tests drive it over the in-memory transport.
import type { StudioApi } from '../../../../common/api/contract';
import { Settings, SettingsPatch } from '../../../../common/api/trajectory-schemas';
import { toUiError, type UiError } from '../shared/errors';

export type SettingKey = keyof Settings;
export const SETTING_KEYS = Object.keys(Settings.shape) as SettingKey[];
export const PROVIDERS = Settings.shape.executionProvider.options;

/** What the fields hold. Text as typed ('' means none); the API key is never put in a field. */
export interface SettingsDraft {
  storeTrajectories: boolean;
  llmBaseUrl: string;
  llmModel: string;
  /** null: keep the stored key; '': remove it; text: replace it. */
  llmApiKey: string | null;
  executionProvider: Settings['executionProvider'];
  /** As typed. */
  maxMergeRank: string;
}

export type FieldErrors = Partial<Record<SettingKey, string>>;

export interface SettingsSnapshot {
  /** As last read from or written to the studio; null before the first load. */
  saved: Settings | null;
  draft: SettingsDraft | null;
  errors: FieldErrors;
  /** Keys whose draft differs from `saved`. */
  changed: SettingKey[];
  busy: 'load' | 'save' | null;
  /** A failed load or save, from the API. */
  error: UiError | null;
  /** The keys the last save stored (cleared by the next edit). */
  stored: SettingKey[] | null;
}

export function draftOf(s: Settings): SettingsDraft {
  return {
    storeTrajectories: s.storeTrajectories,
    llmBaseUrl: s.llmBaseUrl ?? '',
    llmModel: s.llmModel ?? '',
    llmApiKey: null,
    executionProvider: s.executionProvider,
    maxMergeRank: String(s.maxMergeRank),
  };
}

const orNull = (text: string): string | null => (text.trim() === '' ? null : text.trim());

/** The draft's values as settings (the stored key where the draft keeps it). */
function valuesOf(draft: SettingsDraft, saved: Settings): Settings {
  return {
    storeTrajectories: draft.storeTrajectories,
    llmBaseUrl: orNull(draft.llmBaseUrl),
    llmModel: orNull(draft.llmModel),
    llmApiKey: draft.llmApiKey === null ? saved.llmApiKey : orNull(draft.llmApiKey),
    executionProvider: draft.executionProvider,
    maxMergeRank: draft.maxMergeRank.trim() === '' ? NaN : Number(draft.maxMergeRank),
  };
}

/** The changed keys as a patch, or each bad field's message (zod's, from the contract's schema). */
export function patchOf(
  draft: SettingsDraft,
  saved: Settings,
): {
  patch: Partial<Settings>;
  errors: FieldErrors;
} {
  const values = valuesOf(draft, saved);
  const patch: Record<string, unknown> = {};
  const errors: FieldErrors = {};
  for (const key of SETTING_KEYS) {
    if (values[key] === saved[key]) continue;
    const parsed = Settings.shape[key].safeParse(values[key]);
    if (parsed.success) patch[key] = parsed.data;
    else errors[key] = parsed.error.issues[0]?.message ?? 'not accepted';
  }
  return { patch: SettingsPatch.parse(Object.keys(errors).length ? {} : patch), errors };
}

/** What a person should know about a combination the schema allows but that does nothing useful. */
export function settingsNotes(draft: SettingsDraft): string[] {
  const url = orNull(draft.llmBaseUrl);
  const model = orNull(draft.llmModel);
  if (url && !model) return ['The LLM endpoint needs a model name too before evolve can use it.'];
  if (model && !url) return ['A model name without an endpoint URL is not used.'];
  return [];
}

export class SettingsForm {
  private state: SettingsSnapshot = {
    saved: null,
    draft: null,
    errors: {},
    changed: [],
    busy: null,
    error: null,
    stored: null,
  };

  constructor(
    private readonly api: Pick<StudioApi, 'settings'>,
    private readonly onChange: (s: SettingsSnapshot) => void = () => {},
  ) {}

  get snapshot(): SettingsSnapshot {
    return this.state;
  }

  async load(): Promise<boolean> {
    if (this.state.busy) return false;
    this.set({ busy: 'load', error: null });
    try {
      const saved = await this.api.settings.get({});
      this.set({ saved, draft: draftOf(saved), errors: {}, changed: [], busy: null, stored: null });
      return true;
    } catch (err) {
      this.set({ busy: null, error: toUiError(err) });
      return false;
    }
  }

  edit<K extends keyof SettingsDraft>(key: K, value: SettingsDraft[K]): void {
    if (!this.state.draft || !this.state.saved) return;
    const draft = { ...this.state.draft, [key]: value };
    const { patch, errors } = patchOf(draft, this.state.saved);
    const changed = SETTING_KEYS.filter((k) => k in patch || k in errors);
    this.set({ draft, errors, changed, stored: null, error: null });
  }

  /** Back to what is stored. */
  revert(): void {
    if (this.state.saved) this.set({ draft: draftOf(this.state.saved), errors: {}, changed: [], error: null });
  }

  /** Stores the changed keys in one settings.set; false when a field is bad, nothing changed, or it failed. */
  async save(): Promise<boolean> {
    const { draft, saved, busy } = this.state;
    if (!draft || !saved || busy) return false;
    const { patch, errors } = patchOf(draft, saved);
    if (Object.keys(errors).length > 0) {
      this.set({ errors });
      return false;
    }
    const keys = Object.keys(patch) as SettingKey[];
    if (keys.length === 0) return false;
    this.set({ busy: 'save', error: null });
    try {
      const next = await this.api.settings.set(patch);
      this.set({ saved: next, draft: draftOf(next), errors: {}, changed: [], busy: null, stored: keys });
      return true;
    } catch (err) {
      this.set({ busy: null, error: toUiError(err) });
      return false;
    }
  }

  private set(patch: Partial<SettingsSnapshot>): void {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }
}
