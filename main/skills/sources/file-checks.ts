// Per-file checks shared by every source: size, binary content, strict UTF-8.

export const MAX_SKILL_BYTES = 1024 * 1024;

export type FileCheck = { ok: true; text: string } | { ok: false; reason: string };

export function tooLarge(size: number): string | null {
  return size > MAX_SKILL_BYTES ? `file over 1 MiB (${size} bytes)` : null;
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
