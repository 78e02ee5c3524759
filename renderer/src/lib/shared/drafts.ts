// Unsaved editor text, kept per skill in the window's storage (localStorage) while the user types, so
// that leaving the editor, reloading or closing the window loses nothing: the editor restores the
// draft when it opens that skill again. Saving or discarding removes it. Pure: the storage is passed
// in, so the unit tests run it over a Map.
import { z } from 'zod';

/** The part of the Web Storage API the store uses. */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export const Draft = z.object({
  name: z.string(),
  content: z.string(),
  /** The version the editor was opened from. */
  baseVersion: z.number().int().positive(),
  baseSha256: z.string(),
  savedAt: z.string(),
});
export type Draft = z.infer<typeof Draft>;

export const DRAFT_PREFIX = 'pskills.draft/';

export class DraftStore {
  constructor(
    private readonly store: KeyValueStore | null,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** The draft of skill `name`, or null (none, or an entry this build cannot read). */
  get(name: string): Draft | null {
    let raw: string | null;
    try {
      raw = this.store?.getItem(DRAFT_PREFIX + name) ?? null;
    } catch {
      return null; // storage switched off: no drafts
    }
    if (raw === null) return null;
    try {
      const parsed = Draft.safeParse(JSON.parse(raw));
      return parsed.success && parsed.data.name === name ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /** Keeps `content` as the draft of `name`; false when the storage refused it (full or switched off). */
  put(name: string, content: string, base: { version: number; sha256: string }): boolean {
    if (!this.store) return false;
    const draft: Draft = {
      name,
      content,
      baseVersion: base.version,
      baseSha256: base.sha256,
      savedAt: this.clock().toISOString(),
    };
    try {
      this.store.setItem(DRAFT_PREFIX + name, JSON.stringify(draft));
      return true;
    } catch {
      return false;
    }
  }

  remove(name: string): void {
    try {
      this.store?.removeItem(DRAFT_PREFIX + name);
    } catch {
      // storage switched off: nothing was kept
    }
  }
}
