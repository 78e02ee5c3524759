// The Diff view of the Skill page: two stored versions of one skill in Monaco's diff editor. Owns the
// Monaco diff session (link/unlink) and the versions' texts, fetched through skills.get once each.
import { studio } from '../shared/bridge';
import type { DiffStats } from './diff-stats';
import { toUiError, type UiError } from '../shared/errors';
import type { DiffSession } from '../monaco/diff-session';

export class VersionDiff {
  /** The pair on screen (null until both texts arrived). */
  shown = $state.raw<{ from: number; to: number } | null>(null);
  loading = $state(false);
  error = $state.raw<UiError | null>(null);
  stats = $state.raw<DiffStats | null>(null);
  sideBySide = $state(true);
  editorReady = $state(false);
  editorError = $state.raw<UiError | null>(null);

  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- a cache of fetched texts, never rendered
  private readonly texts = new Map<number, Promise<string>>();
  private session: DiffSession | null = null;
  private wanted: { from: number; to: number } | null = null;
  private seq = 0;
  private linkSeq = 0;
  private disposed = false;

  constructor(readonly name: string) {}

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

  /** Mounts the diff editor into `host`; Monaco's code is fetched on first use only. */
  async link(host: HTMLElement): Promise<void> {
    const seq = ++this.linkSeq;
    try {
      const { createDiffSession } = await import('../monaco/diff-session');
      if (seq !== this.linkSeq || this.disposed) return;
      this.session = createDiffSession(host, { sideBySide: this.sideBySide, onStats: (s) => (this.stats = s) });
      this.editorReady = true;
      this.editorError = null;
      const pair = this.wanted;
      if (pair) void this.show(pair.from, pair.to);
    } catch (err) {
      if (seq === this.linkSeq) this.editorError = toUiError(err);
    }
  }

  unlink(): void {
    this.linkSeq++;
    this.session?.dispose();
    this.session = null;
    this.editorReady = false;
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
