// The Playground page's state, kept by StudioApp so a generation survives leaving the page: the
// engine's bundle (the default one loads on first use), the form, the adapter chosen, the chat so far
// and the current run.
import type { GlobalVersion } from '../../../../common/api/adapter-schemas';
import type { AdapterChoice, ChatMessage } from '../../../../common/api/engine-schemas';
import type { SkillSummary } from '../../../../common/api/skill-schemas';
import { studio } from '../shared/bridge';
import { settledTurns } from './chat';
import { EngineBundle } from './playground-bundle.svelte';
import { GenerationRun } from './playground-run.svelte';
import { GenerationSettings } from './playground-settings.svelte';

export class Playground {
  readonly bundle = new EngineBundle();
  readonly settings = new GenerationSettings();
  readonly run = new GenerationRun();
  /** Why the form cannot be sent (shown under the Generate button), or null. */
  formError = $state<string | null>(null);
  /** The adapter every generation runs with (null: the base model). */
  adapter = $state.raw<AdapterChoice | null>(null);
  /** Every skill, for the picker (the Library's list may be filtered). */
  skills = $state.raw<SkillSummary[]>([]);
  /** The loaded bundle's newest global version, for the picker. */
  global = $state.raw<GlobalVersion | null>(null);
  /** Chat turns before the exchange on screen (user and assistant messages, in order). */
  turns = $state.raw<ChatMessage[]>([]);
  /** The chat exchange whose reply is `run` (null: a raw prompt ran, or nothing yet). */
  current = $state.raw<{ user: string } | null>(null);

  private opened = false;

  /** onAdapters: a run may have compiled an adapter (a skill's first use): the adapter list follows. */
  constructor(private readonly onAdapters: () => void = () => {}) {}

  /** The page was shown: ask the engine what it holds, once, and load the default bundle if it holds none. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    void this.start();
  }

  private async start(): Promise<void> {
    await this.bundle.refresh();
    if (this.bundle.info && !this.bundle.info.loaded && this.bundle.loading === null) await this.bundle.loadDefault();
    await this.refreshChoices();
  }

  /** Loads the folder in the field, then what the picker offers for that bundle. */
  async loadDir(): Promise<void> {
    await this.bundle.loadDir();
    await this.refreshChoices();
  }

  async loadDefault(): Promise<void> {
    await this.bundle.loadDefault();
    await this.refreshChoices();
  }

  /** The skills and the loaded bundle's global adapter (a failure leaves the picker as it was). */
  async refreshChoices(): Promise<void> {
    const [skills, history] = await Promise.allSettled([
      studio.skills.list({}),
      this.bundle.loaded ? studio.ema.history({}) : Promise.resolve(null),
    ]);
    if (skills.status === 'fulfilled') this.skills = skills.value;
    if (history.status === 'fulfilled') this.global = history.value?.versions[0] ?? null;
  }

  /** The turns that a new chat message follows. */
  get history(): ChatMessage[] {
    return settledTurns(this.turns, this.current, this.run.status, this.run.text);
  }

  generate(): void {
    if (this.run.running) return;
    const chat = this.settings.mode === 'chat';
    const history = this.history;
    const check = this.settings.request(chat ? history : [], this.adapter);
    this.formError = check.ok ? null : check.message;
    if (!check.ok) return;
    this.turns = history;
    if (chat) {
      this.current = { user: this.settings.user };
      this.settings.user = '';
    } else this.current = null;
    const exchange = this.current;
    void this.run.start(check.input).then(() => {
      // A failed reply is not history: its message goes back to the input to send again.
      if (exchange && this.run.status === 'failed' && this.current === exchange && !this.settings.user)
        this.settings.user = exchange.user;
      if (this.adapter?.kind === 'skill') this.onAdapters();
    });
  }

  /** Forgets the conversation (the system message and the settings stay). */
  newChat(): void {
    if (this.run.running) return;
    this.run.reset();
    this.turns = [];
    this.current = null;
    this.formError = null;
  }

  dispose(): void {
    this.run.stop();
  }
}
