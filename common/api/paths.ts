// Folder paths in API requests. They must be absolute: a relative one would resolve against the
// server's working directory, which the caller neither sees nor controls.
import { z } from 'zod';

/** POSIX "/…", Windows "C:\…" or "C:/…", and UNC "\\server\…". */
export const isAbsolutePath = (p: string): boolean => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p);

export const AbsoluteDir = z.string().min(1).max(4096).refine(isAbsolutePath, {
  message: "must be an absolute path (a relative one would resolve against the server's working directory)",
});
