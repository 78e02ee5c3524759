// Closing the window with unsaved editor text or tests: the renderer reports what is unsaved (IPC_UNSAVED),
// and the window's 'close' handler asks with a native dialog built here. Pure: no electron import.

/** Longest skill name accepted from the renderer (the store's names are far shorter). */
const MAX_SUBJECT = 200;

/** The renderer's report, checked: a non-empty name, or null for "nothing unsaved". */
export function parseUnsaved(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim();
  return s === '' ? null : s.slice(0, MAX_SUBJECT);
}

export const LEAVE = 0;
export const CANCEL = 1;

/** The options of Electron's dialog.showMessageBox(Sync) for the close question. */
export interface ClosePrompt {
  type: 'warning';
  title: string;
  message: string;
  detail: string;
  buttons: string[];
  defaultId: number;
  cancelId: number;
  noLink: true;
}

/** The question to ask before the window closes, or null when nothing is unsaved (close at once). */
export function closePrompt(unsaved: string | null): ClosePrompt | null {
  if (unsaved === null) return null;
  return {
    type: 'warning',
    title: 'Unsaved changes',
    message: `“${unsaved}” has unsaved changes.`,
    detail:
      'Leaving keeps SKILL.md text as a draft (the editor brings it back when you open the skill again); unsaved tests are dropped. Cancel to stay and save them.',
    buttons: ['Leave', 'Cancel'],
    defaultId: CANCEL,
    cancelId: CANCEL,
    noLink: true,
  };
}

/** Whether the window may close: nothing unsaved, or the user chose Leave (Esc or closing the dialog is Cancel). */
export function mayClose(unsaved: string | null, choice: number | null): boolean {
  if (closePrompt(unsaved) === null) return true;
  return choice === LEAVE;
}
