// Native pickers for import and export paths: the renderer names a PickKind over IPC_PICK and main
// shows dialog.showOpenDialog with the options built here. Pure: no electron import, so the unit
// tests check the parsing and the options without a window.
import { PICK_KINDS, type PickKind } from '../../common/api/ipc-channels';

/** The renderer's request, checked: one of PICK_KINDS, else null (nothing is shown). */
export function parsePickKind(raw: unknown): PickKind | null {
  return typeof raw === 'string' && (PICK_KINDS as readonly string[]).includes(raw) ? (raw as PickKind) : null;
}

/** The options of Electron's dialog.showOpenDialog for one kind. */
export interface PickDialogOptions {
  title: string;
  buttonLabel: string;
  properties: ('openFile' | 'openDirectory' | 'createDirectory' | 'dontAddToRecent')[];
  filters?: { name: string; extensions: string[] }[];
}

export function pickDialogOptions(kind: PickKind): PickDialogOptions {
  switch (kind) {
    case 'import-folder':
      return { title: 'Import skills from a folder', buttonLabel: 'Import', properties: ['openDirectory'] };
    case 'import-tgz':
      return {
        title: 'Import skills from a package archive',
        buttonLabel: 'Import',
        properties: ['openFile'],
        // 'tar.gz' is not a single extension to the dialog; 'gz' lets .tar.gz through.
        filters: [{ name: 'npm package archives', extensions: ['tgz', 'gz'] }],
      };
    case 'bundle-folder':
      return { title: 'Load a model bundle', buttonLabel: 'Load', properties: ['openDirectory'] };
    case 'hf-folder':
      return {
        title: 'A Hugging Face checkpoint folder (config.json, safetensors, tokenizer)',
        buttonLabel: 'Choose',
        properties: ['openDirectory'],
      };
    case 'gguf-file':
      return {
        title: 'A GGUF model file (llama.cpp, LM Studio, Ollama)',
        buttonLabel: 'Choose',
        properties: ['openFile'],
        filters: [{ name: 'GGUF models', extensions: ['gguf'] }],
      };
    case 'export-folder':
      return {
        title: 'Export into a folder',
        buttonLabel: 'Choose',
        properties: ['openDirectory', 'createDirectory'],
      };
  }
}

/** The path the dialog returned, or null when it was cancelled or returned nothing usable. */
export function pickedPath(result: { canceled: boolean; filePaths: readonly string[] }): string | null {
  if (result.canceled) return null;
  const path = result.filePaths[0];
  return typeof path === 'string' && path !== '' ? path : null;
}
