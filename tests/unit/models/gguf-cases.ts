// Builds the crafted GGUF headers of tests/fixtures/gguf-gate-cases.json (the cases the Python gate's
// pytest builds too) into small files: the fields written in order, a sparse tail by ftruncate.
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, symlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export type Field = [string, number | string];
export interface GateCase {
  name: string;
  fields?: Field[];
  extend?: number;
  special?: 'fifo' | 'devzero-link' | 'folder';
  refusal: string | null;
}
export interface CaseFile {
  limits: Record<string, unknown>;
  cases: GateCase[];
  /** Headers the gate passes, with the importer's problem (null: none) that follows the file's name. */
  importer_cases: (Omit<GateCase, 'refusal'> & { problem: string | null })[];
}

export const CASES = JSON.parse(
  readFileSync(join(process.cwd(), 'tests', 'fixtures', 'gguf-gate-cases.json'), 'utf8'),
) as CaseFile;

function bytesOf([op, v]: Field, pos: number): Buffer | number {
  const b = (k: number) => Buffer.alloc(k);
  switch (op) {
    case 'ascii':
      return Buffer.from(String(v), 'latin1');
    case 'u8':
      return Buffer.from([Number(v)]);
    case 'u32': {
      const x = b(4);
      x.writeUInt32LE(Number(v));
      return x;
    }
    case 'i32': {
      const x = b(4);
      x.writeInt32LE(Number(v));
      return x;
    }
    case 'f32': {
      const x = b(4);
      x.writeFloatLE(Number(v));
      return x;
    }
    case 'u64': {
      const x = b(8);
      x.writeBigUInt64LE(BigInt(v));
      return x;
    }
    case 'str': {
      const s = Buffer.from(String(v), 'utf8');
      const x = b(8);
      x.writeBigUInt64LE(BigInt(s.length));
      return Buffer.concat([x, s]);
    }
    case 'zeros':
      return b(Number(v));
    case 'align':
      return b((Number(v) - (pos % Number(v))) % Number(v));
    case 'hole':
      return Number(v);
    default:
      throw new Error(`gguf-gate-cases.json: unknown field op ${op}`);
  }
}

/** Writes case `c` as `dir/name`; its path. */
export function buildCase(c: GateCase, dir: string, name: string): string {
  const path = join(dir, name);
  if (c.special === 'fifo') execFileSync('mkfifo', [path]);
  else if (c.special === 'devzero-link') symlinkSync('/dev/zero', path);
  else if (c.special === 'folder') mkdirSync(path);
  else {
    const fd = openSync(path, 'w');
    let pos = 0;
    for (const f of c.fields ?? []) {
      const out = bytesOf(f, pos);
      if (typeof out === 'number') pos += out;
      else {
        writeSync(fd, out, 0, out.length, pos);
        pos += out.length;
      }
    }
    ftruncateSync(fd, pos + (c.extend ?? 0));
    closeSync(fd);
  }
  return path;
}
