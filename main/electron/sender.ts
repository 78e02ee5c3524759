// Which IPC senders we answer: only the main frame of our own window, showing our own page.
export interface SenderInfo {
  frameUrl: string | undefined;
  isMainFrame: boolean;
  webContentsId: number;
}

export function checkSender(sender: SenderInfo, trusted: { webContentsId: number; pageUrl: string }): string | null {
  if (sender.webContentsId !== trusted.webContentsId) return 'IPC from an unknown window';
  if (!sender.isMainFrame) return 'IPC from a subframe';
  if (!sender.frameUrl) return 'IPC from a frame without a URL';
  const page = new URL(trusted.pageUrl);
  const from = new URL(sender.frameUrl);
  if (from.protocol !== page.protocol || from.host !== page.host || from.pathname !== page.pathname) {
    return `IPC from unexpected page ${from.protocol}//${from.host}${from.pathname}`;
  }
  return null;
}
