// What a drop onto the window imports. Under Electron a dropped file or folder has a path (the preload's
// pathForFile) and import.run reads it; a browser tab gets no paths, only a File's bytes, so a .tgz is
// sent to import.upload and a folder is refused with what to do instead. Pure: the unit tests feed it
// plain objects. A folder holding adapter_config.json is a PEFT adapter, not skills: adapters.import
// takes it by path (Electron); a browser tab is told where to type the path.
import { MAX_UPLOAD_BYTES } from '../../../../common/api/skill-schemas';

export interface DroppedItem {
  name: string;
  /** From DataTransferItem.webkitGetAsEntry(); 'unknown' when the browser could not tell. */
  kind: 'file' | 'directory' | 'unknown';
  size: number;
  /** The file-system path (Electron only); null in a browser tab. */
  path: string | null;
  /** A folder whose top level holds adapter_config.json (read from its directory entry). */
  peft?: boolean;
}

export type DropPlan =
  | { action: 'import-path'; path: string }
  | { action: 'upload'; index: number; fileName: string }
  | { action: 'import-adapter'; path: string }
  | { action: 'refuse'; message: string };

export const isArchiveName = (name: string): boolean => /\.(tgz|tar\.gz)$/i.test(name);

export function planDrop(items: readonly DroppedItem[]): DropPlan {
  if (items.length === 0)
    return { action: 'refuse', message: 'Nothing to import was dropped: drop a folder or a .tgz file.' };
  if (items.length > 1)
    return {
      action: 'refuse',
      message: `${items.length} items were dropped: drop one folder or one .tgz file at a time.`,
    };
  const item = items[0]!;
  const notSkills = {
    action: 'refuse',
    message: `${item.name} is not a folder or a .tgz archive: only those hold skills to import.`,
  } as const;
  if (item.kind === 'file' && !isArchiveName(item.name)) return notSkills;
  if (item.kind === 'directory' && item.peft)
    return item.path
      ? { action: 'import-adapter', path: item.path }
      : {
          action: 'refuse',
          message: `${item.name} is a PEFT adapter folder, and a browser tab cannot read a dropped folder: type its path in Import PEFT… on the Adapters page, or use the desktop app.`,
        };
  if (item.path) return { action: 'import-path', path: item.path };
  if (item.kind === 'directory')
    return {
      action: 'refuse',
      message: `A browser tab cannot read the dropped folder ${item.name}: type its path in Import skills, drop a .tgz of it, or use the desktop app.`,
    };
  if (!isArchiveName(item.name)) return notSkills;
  if (item.size > MAX_UPLOAD_BYTES)
    return {
      action: 'refuse',
      message: `${item.name} is ${(item.size / 1024 / 1024).toFixed(1)} MiB, over the 1.25 MiB a browser tab can send: type its path in Import skills instead.`,
    };
  return { action: 'upload', index: 0, fileName: item.name };
}

/** Whether a drag carries files (not text or a link being dragged within the page). */
export function carriesFiles(types: readonly string[] | null | undefined): boolean {
  return !!types && types.includes('Files');
}

/** Bytes → base64, in chunks (String.fromCharCode over a whole archive would overflow the stack). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Whether a folder's top-level names make it a PEFT adapter folder. */
export const isPeftListing = (names: readonly string[]): boolean => names.includes('adapter_config.json');
