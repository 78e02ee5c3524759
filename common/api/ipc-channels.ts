// Electron IPC channel names: the only ones the preload and main use.
export const IPC_CALL = 'studio:call';
export const IPC_STREAM = 'studio:stream';
/** Renderer → main: which skill has unsaved editor text (a name), or null when nothing is unsaved. */
export const IPC_UNSAVED = 'studio:unsaved';
/** Renderer → main (invoke): show a native open dialog of one PickKind; answers a path or null. */
export const IPC_PICK = 'studio:pick';

/** What a native picker asks for: a folder to import from, a .tgz to import, a bundle folder, a checkpoint folder or GGUF file, a folder to write into. */
export const PICK_KINDS = [
  'import-folder',
  'import-tgz',
  'bundle-folder',
  'hf-folder',
  'gguf-file',
  'export-folder',
] as const;
export type PickKind = (typeof PICK_KINDS)[number];

/** What the preload exposes besides the API (window.studioWindow): window-level state for main. */
export interface StudioWindowBridge {
  /** Tells main which skill has unsaved text (null: none), so closing the window asks first. */
  setUnsaved(subject: string | null): void;
  /** The file-system path of a dropped File (Electron's webUtils.getPathForFile); null when it has none. */
  pathForFile(file: File): string | null;
  /** A native open dialog; resolves the chosen path, or null when the user cancelled. */
  pickPath(kind: PickKind): Promise<string | null>;
}
