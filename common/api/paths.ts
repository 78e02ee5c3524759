// Folder paths in API requests. They must be absolute: a relative one would resolve against the
// server's working directory, which the caller neither sees nor controls.
import { z } from 'zod';

/** POSIX "/…", Windows "C:\…" or "C:/…", and UNC "\\server\…". */
export const isAbsolutePath = (p: string): boolean => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p);

/** An absolute path no file system can hold a NUL in (Node's fs would throw, not answer). */
export const AbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), { message: 'must not contain a NUL character (U+0000); no path can' })
  .refine(isAbsolutePath, {
    message: "must be an absolute path (a relative one would resolve against the server's working directory)",
  });

export const AbsoluteDir = AbsolutePath;
