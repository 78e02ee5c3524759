// Per-file checks shared by every source: size, binary content, strict UTF-8; and the per-import
// caps that keep a hostile archive or folder from exhausting memory.
import { StudioError } from '../../../common/errors';
import { byteText as limitText, READ_LIMITS } from '../../files/read-gate';

export const MAX_SKILL_BYTES = READ_LIMITS['SKILL.md'];

export interface ImportLimits {
  entries: number; // archive entries or folder entries seen, of any kind
  bytes: number; // SKILL.md (and package.json) bytes held in memory
}

// 64 MiB is ~10,000 skills of 6 KiB; the pinned corpus averages ~10 KiB per imported skill.
export const IMPORT_LIMITS: Readonly<ImportLimits> = Object.freeze({ entries: 100_000, bytes: 64 * 1024 * 1024 });

/**
 * Counts entries and held bytes for one import. Past a cap the whole import is refused (not
 * truncated), so what gets imported never depends on the order of entries.
 */
export class ImportBudget {
  private entries = 0;
  private bytes = 0;
  constructor(
    private readonly source: string,
    private readonly what: string,
    private readonly limits: ImportLimits = IMPORT_LIMITS,
  ) {}

  /** Counts one entry; the refusal once past the cap, else null. */
  entry(): StudioError | null {
    return ++this.entries > this.limits.entries
      ? this.refuse(`it holds more than ${count(this.limits.entries)} entries`)
      : null;
  }

  /** Call before buffering `size` bytes; the refusal once past the cap, else null. */
  take(size: number): StudioError | null {
    this.bytes += size;
    return this.bytes > this.limits.bytes
      ? this.refuse(`its ${this.what} add up to more than ${byteText(this.limits.bytes)}`)
      : null;
  }

  private refuse(why: string): StudioError {
    return new StudioError('import_failed', `${this.source} rejected: ${why} (the import limit); nothing was imported`);
  }
}

const count = (n: number) => n.toLocaleString('en-US');
const byteText = (n: number) => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${count(n)} bytes`);

export type FileCheck = { ok: true; text: string } | { ok: false; reason: string };

/** The read gate's words (main/files/read-gate.ts), for archive entries that never touch the disk. */
export function tooLarge(size: number): string | null {
  return size > MAX_SKILL_BYTES
    ? `${size.toLocaleString('en-US')} bytes, over the ${limitText(MAX_SKILL_BYTES)} limit for a SKILL.md; not read`
    : null;
}

export function decodeSkillFile(bytes: Uint8Array): FileCheck {
  const large = tooLarge(bytes.length);
  if (large) return { ok: false, reason: large };
  const nul = bytes.indexOf(0);
  if (nul >= 0) return { ok: false, reason: `binary file (NUL byte at offset ${nul})` };
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, reason: `invalid UTF-8 at byte offset ${firstInvalidUtf8(bytes)}` };
  }
}

/** Offset of the first byte that starts an invalid UTF-8 sequence (RFC 3629), or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    const shape = sequenceShape(b);
    if (!shape) return i;
    const [need, min] = shape;
    let cp = need === 0 ? b : b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** Continuation bytes a lead byte needs and the smallest code point it may encode (no overlongs). */
function sequenceShape(lead: number): [need: number, min: number] | null {
  if (lead < 0x80) return [0, 0];
  if (lead >= 0xc2 && lead <= 0xdf) return [1, 0x80];
  if (lead >= 0xe0 && lead <= 0xef) return [2, 0x800];
  if (lead >= 0xf0 && lead <= 0xf4) return [3, 0x10000];
  return null;
}
