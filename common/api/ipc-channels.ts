// Electron IPC channel names: the only ones the preload and main use.
export const IPC_CALL = 'studio:call';
export const IPC_STREAM = 'studio:stream';
/** Renderer → main: which skill has unsaved editor text (a name), or null when nothing is unsaved. */
export const IPC_UNSAVED = 'studio:unsaved';

/** What the preload exposes besides the API (window.studioWindow): window-level state for main. */
export interface StudioWindowBridge {
  /** Tells main which skill has unsaved text (null: none), so closing the window asks first. */
  setUnsaved(subject: string | null): void;
}
