// The native pickers' IPC logic (main/electron/pickers.ts): only known kinds are shown, each kind's
// dialog options, and the chosen path (or null on cancel). The dialog itself needs a window: not driven here.
import { describe, expect, it } from 'vitest';
import { PICK_KINDS } from '../../../common/api/ipc-channels';
import { parsePickKind, pickDialogOptions, pickedPath } from '../../../main/electron/pickers';

describe('native pickers', () => {
  it('accepts exactly the known kinds from the renderer', () => {
    for (const kind of PICK_KINDS) expect(parsePickKind(kind)).toBe(kind);
    for (const bad of ['', 'import', 'IMPORT-FOLDER', 42, null, undefined, { kind: 'import-folder' }])
      expect(parsePickKind(bad)).toBeNull();
  });

  it('asks for a folder or a .tgz file, and lets an export create its folder', () => {
    expect(pickDialogOptions('import-folder').properties).toEqual(['openDirectory']);
    const tgz = pickDialogOptions('import-tgz');
    expect(tgz.properties).toEqual(['openFile']);
    expect(tgz.filters?.[0]?.extensions).toEqual(['tgz', 'gz']);
    expect(pickDialogOptions('bundle-folder').properties).toEqual(['openDirectory']);
    expect(pickDialogOptions('export-folder').properties).toContain('createDirectory');
    for (const kind of PICK_KINDS) expect(pickDialogOptions(kind).title.length).toBeGreaterThan(0);
  });

  it('returns the first chosen path, or null when cancelled or empty', () => {
    expect(pickedPath({ canceled: false, filePaths: ['/a', '/b'] })).toBe('/a');
    expect(pickedPath({ canceled: true, filePaths: ['/a'] })).toBeNull();
    expect(pickedPath({ canceled: false, filePaths: [] })).toBeNull();
    expect(pickedPath({ canceled: false, filePaths: [''] })).toBeNull();
  });
});
