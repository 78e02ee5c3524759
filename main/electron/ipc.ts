// Electron IPC transport: checks the sender frame, then hands the raw payload to the dispatcher
// (which parses it against the contract). Raw ipcMain is used nowhere else.
import { ipcMain, type IpcMainEvent, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { IPC_CALL, IPC_PICK, IPC_STREAM, IPC_UNSAVED, type PickKind } from '../../common/api/ipc-channels';
import type { Contract } from '../../common/api/define';
import type { CallOutcome } from '../../common/api/wire';
import type { Dispatcher } from '../api/dispatcher';
import { StreamServer } from '../api/transports/stream-server';
import { parseUnsaved } from './close-guard';
import { parsePickKind } from './pickers';
import { checkSender } from './sender';

export function registerIpc(
  dispatcher: Dispatcher<Contract>,
  trusted: () => { webContentsId: number; pageUrl: string } | null,
  /** The window's unsaved-changes report (a skill name or null), from our own page only. */
  onUnsaved: (subject: string | null) => void = () => {},
  /** A native open dialog of the checked kind (main.ts: dialog.showOpenDialog); the chosen path or null. */
  pick: (kind: PickKind) => Promise<string | null> = async () => null,
): () => void {
  const streamServers = new Map<number, StreamServer>();

  const refuse = (event: IpcMainEvent | IpcMainInvokeEvent): string | null => {
    const t = trusted();
    if (!t) return 'no studio window';
    return checkSender(
      {
        frameUrl: event.senderFrame?.url,
        isMainFrame: event.senderFrame === event.sender.mainFrame,
        webContentsId: event.sender.id,
      },
      t,
    );
  };

  ipcMain.handle(IPC_CALL, async (event, method: unknown, input: unknown): Promise<CallOutcome> => {
    const why = refuse(event);
    if (why) return { ok: false, error: { code: 'forbidden', message: why } };
    if (typeof method !== 'string')
      return { ok: false, error: { code: 'invalid_input', message: 'method must be a string' } };
    return dispatcher.callOutcome(method, input);
  });

  const serverFor = (sender: WebContents): StreamServer => {
    let s = streamServers.get(sender.id);
    if (!s) {
      const server = new StreamServer(dispatcher, (msg) => {
        if (!sender.isDestroyed()) sender.send(IPC_STREAM, msg);
      });
      streamServers.set(sender.id, server);
      sender.once('destroyed', () => {
        server.close();
        streamServers.delete(sender.id);
      });
      s = server;
    }
    return s;
  };

  ipcMain.on(IPC_STREAM, (event, msg: unknown) => {
    if (refuse(event)) return;
    serverFor(event.sender).receive(msg);
  });

  ipcMain.on(IPC_UNSAVED, (event, subject: unknown) => {
    if (refuse(event)) return;
    onUnsaved(parseUnsaved(subject));
  });

  ipcMain.handle(IPC_PICK, async (event, raw: unknown): Promise<string | null> => {
    const kind = parsePickKind(raw);
    if (refuse(event) || !kind) return null;
    return pick(kind);
  });

  return () => {
    ipcMain.removeHandler(IPC_CALL);
    ipcMain.removeHandler(IPC_PICK);
    ipcMain.removeAllListeners(IPC_STREAM);
    ipcMain.removeAllListeners(IPC_UNSAVED);
    for (const s of streamServers.values()) s.close();
  };
}
