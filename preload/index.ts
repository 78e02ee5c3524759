// Exposes exactly the StudioApi contract (one named function per method) as window.studio, and
// window.studioWindow: the unsaved-changes report that lets main ask before the window closes, the path
// of a dropped file, and native open dialogs.
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { studioContract, type StudioBridge } from '../common/api/contract';
import { entries } from '../common/api/define';
import { IPC_CALL, IPC_PICK, IPC_STREAM, IPC_UNSAVED, type StudioWindowBridge } from '../common/api/ipc-channels';
import type { BridgeOutcome } from '../common/api/define';
import type { ClientMessage, ServerMessage } from '../common/api/wire';

type Pending = { onEvent: (e: unknown) => void; done: (o: BridgeOutcome) => void };
const streams = new Map<string, Pending>();
let next = 0;

ipcRenderer.on(IPC_STREAM, (_event, msg: ServerMessage) => {
  const p = streams.get(msg.id);
  if (!p) return;
  if (msg.t === 'event') return p.onEvent(msg.event);
  streams.delete(msg.id);
  p.done(msg.t === 'ok' ? { ok: true, value: msg.value } : { ok: false, error: msg.error });
});

const bridge: Record<string, Record<string, unknown>> = {};
for (const [wire, def] of entries(studioContract)) {
  const [ns, name] = wire.split('.') as [string, string];
  const group = (bridge[ns] ??= {});
  group[name] =
    def.kind === 'method'
      ? (input: unknown): Promise<BridgeOutcome> => ipcRenderer.invoke(IPC_CALL, wire, input)
      : (input: unknown, onEvent: (e: unknown) => void) => {
          const id = `p${++next}`;
          const result = new Promise<BridgeOutcome>((done) => streams.set(id, { onEvent, done }));
          ipcRenderer.send(IPC_STREAM, { t: 'start', id, method: wire, input } satisfies ClientMessage);
          return {
            result,
            cancel: () => ipcRenderer.send(IPC_STREAM, { t: 'cancel', id } satisfies ClientMessage),
          };
        };
}

contextBridge.exposeInMainWorld('studio', bridge as StudioBridge);

const windowBridge: StudioWindowBridge = {
  setUnsaved: (subject) => ipcRenderer.send(IPC_UNSAVED, typeof subject === 'string' ? subject : null),
  // Electron 32 removed File.path; webUtils is the supported way, and it answers '' for a File not from disk.
  pathForFile: (file) => webUtils.getPathForFile(file) || null,
  pickPath: (kind) => ipcRenderer.invoke(IPC_PICK, kind) as Promise<string | null>,
};
contextBridge.exposeInMainWorld('studioWindow', windowBridge);
