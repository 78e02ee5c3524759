// Electron entry: one sandboxed window over the IPC transport; no remote content, ever.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, session, shell } from 'electron';
import { createStudio, type Studio } from '../api/root';
import { APP_ROOT, PRODUCT_NAME } from '../paths';
import { closePrompt, mayClose } from './close-guard';
import { registerIpc } from './ipc';
import { pickDialogOptions, pickedPath } from './pickers';

app.setName(PRODUCT_NAME);
const dataDirFlag = (() => {
  const i = process.argv.findIndex((a) => a === '--data-dir' || a.startsWith('--data-dir='));
  if (i < 0) return undefined;
  const a = process.argv[i]!;
  return a.includes('=') ? a.slice('--data-dir='.length) : process.argv[i + 1];
})();
const pageFile = join(APP_ROOT, 'out', 'renderer', 'index.html');
const pageUrl = pathToFileURL(pageFile).href;

let studio: Studio | null = null;
let win: BrowserWindow | null = null;
/** The skill whose editor text is unsaved, as the renderer last reported it (null: nothing unsaved). */
let unsaved: string | null = null;

function createWindow(): BrowserWindow {
  const w = new BrowserWindow({
    width: 1280,
    height: 820,
    title: PRODUCT_NAME,
    webPreferences: {
      preload: join(APP_ROOT, 'out', 'preload', 'index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  w.webContents.setWindowOpenHandler(({ url }) => {
    if (url.startsWith('https://')) void shell.openExternal(url);
    return { action: 'deny' };
  });
  w.webContents.on('will-navigate', (e, url) => {
    if (url !== pageUrl) e.preventDefault();
  });
  // A new document (reload) starts with nothing unsaved; its editor reports again when changed.
  w.webContents.on('did-start-navigation', (details) => {
    if (details.isMainFrame && !details.isSameDocument) unsaved = null;
  });
  // Closing with unsaved editor text asks first (the renderer's beforeunload writes the draft).
  w.on('close', (e) => {
    const prompt = closePrompt(unsaved);
    if (!prompt) return;
    const choice = dialog.showMessageBoxSync(w, prompt);
    if (!mayClose(unsaved, choice)) e.preventDefault();
  });
  void w.loadFile(pageFile);
  return w;
}

app.whenReady().then(() => {
  // No remote content: only our files, devtools and data/blob URLs load.
  session.defaultSession.webRequest.onBeforeRequest((details, cb) => {
    const ok = /^(file|devtools|data|blob):/.test(details.url);
    cb({ cancel: !ok });
  });
  session.defaultSession.setPermissionRequestHandler((_wc, _perm, cb) => cb(false));

  studio = createStudio({ dataDir: dataDirFlag ?? app.getPath('userData') });
  registerIpc(
    studio.dispatcher,
    () => (win && !win.isDestroyed() ? { webContentsId: win.webContents.id, pageUrl } : null),
    (subject) => (unsaved = subject),
    async (kind) => {
      if (!win || win.isDestroyed()) return null;
      return pickedPath(await dialog.showOpenDialog(win, pickDialogOptions(kind)));
    },
  );
  win = createWindow();
});

app.on('window-all-closed', () => {
  void (studio?.dispose() ?? Promise.resolve()).finally(() => app.quit());
});
