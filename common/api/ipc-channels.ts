// Electron IPC channel names: the only two the preload and main use.
export const IPC_CALL = 'studio:call';
export const IPC_STREAM = 'studio:stream';
