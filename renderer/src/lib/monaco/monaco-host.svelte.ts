// A view that owns one Monaco session, mounted into a host element on demand (link/unlink). Monaco's
// code is fetched on first use only; a link overtaken by an unlink or a dispose makes nothing.
import { toUiError, type UiError } from '../shared/errors';

export abstract class MonacoHost<S extends { dispose(): void }> {
  editorReady = $state(false);
  editorError = $state.raw<UiError | null>(null);

  protected session: S | null = null;
  protected disposed = false;
  private linkSeq = 0;

  /** Fetches Monaco's code; the answer makes this view's session in a host. */
  protected abstract load(): Promise<(host: HTMLElement) => S>;

  /** Called once the session is up. */
  protected linked(): void {}

  async link(host: HTMLElement): Promise<void> {
    const seq = ++this.linkSeq;
    try {
      const make = await this.load();
      if (seq !== this.linkSeq || this.disposed) return;
      this.session = make(host);
      this.editorReady = true;
      this.editorError = null;
      this.linked();
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
}
