// The Diff view of the Skill page: two stored versions of one skill in Monaco's diff editor. Owns the
// Monaco diff session (link/unlink) and the versions' texts, fetched through skills.get once each.
import { studio } from '../shared/bridge';
import type { DiffStats } from './diff-stats';
import { toUiError, type UiError } from '../shared/errors';
import type { DiffSession } from '../monaco/diff-session';
import { MonacoHost } from '../monaco/monaco-host.svelte';

export class VersionDiff extends MonacoHost<DiffSession> {
  /** The pair on screen (null until both texts arrived). */
  shown = $state.raw<{ from: number; to: number } | null>(null);
  loading = $state(false);
  error = $state.raw<UiError | null>(null);
  stats = $state.raw<DiffStats | null>(null);
  sideBySide = $state(true);

  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- a cache of fetched texts, never rendered
  private readonly texts = new Map<number, Promise<string>>();
  private wanted: { from: number; to: number } | null = null;
  private seq = 0;

  constructor(readonly name: string) {
    super();
  }

  /** Shows versions `from` (left) and `to` (right). */
  async show(from: number, to: number): Promise<void> {
    const seq = ++this.seq;
    this.wanted = { from, to };
    this.loading = true;
    try {
      const [a, b] = await Promise.all([this.text(from), this.text(to)]);
      if (seq !== this.seq || this.disposed) return;
      this.stats = null;
      this.session?.setTexts(a, b);
      this.shown = { from, to };
      this.error = null;
    } catch (err) {
      if (seq === this.seq) this.error = toUiError(err);
    } finally {
      if (seq === this.seq) this.loading = false;
    }
  }

  setSideBySide(on: boolean): void {
    this.sideBySide = on;
    this.session?.setSideBySide(on);
  }

  protected async load(): Promise<(host: HTMLElement) => DiffSession> {
    const { createDiffSession } = await import('../monaco/diff-session');
    return (host) => createDiffSession(host, { sideBySide: this.sideBySide, onStats: (s) => (this.stats = s) });
  }

  /** The pair asked for before the editor was up. */
  protected override linked(): void {
    const pair = this.wanted;
    if (pair) void this.show(pair.from, pair.to);
  }

  dispose(): void {
    this.disposed = true;
    this.seq++;
    this.unlink();
  }

  private text(version: number): Promise<string> {
    let text = this.texts.get(version);
    if (!text) {
      text = studio.skills.get({ name: this.name, version }).then((d) => d.content);
      text.catch(() => this.texts.delete(version)); // retried on the next show
      this.texts.set(version, text);
    }
    return text;
  }
}
