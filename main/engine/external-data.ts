// ONNX external data: the files a graph's tensors read their bytes from (docs/bundle-format.md
// "encoder.onnx": encoder.onnx reads its weights from lm.onnx or lm.onnx.data). Before a session opens,
// every such file must be a plain name listed in bundle.json's files, so its bytes were size- and
// hash-checked with the rest of the bundle and nothing outside the bundle folder is read.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { invalid } from './errors';
import type { BundleManifest } from './manifest';

/** A tensor whose data lies in another file (TensorProto.data_location EXTERNAL). */
export interface ExternalTensor {
  readonly name: string;
  readonly location: string;
}

/** Positional reads through a 64 KiB window: the walk skips raw_data without reading it. */
class FileReader {
  private window = Buffer.alloc(0);
  private start = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
  ) {}

  bytes(pos: number, n: number): Buffer {
    if (pos < this.start || pos + n > this.start + this.window.length) {
      const len = Math.min(Math.max(n, 1 << 16), this.size - pos);
      const buf = Buffer.alloc(len);
      const got = readSync(this.fd, buf, 0, len, pos);
      if (got < n) throw new Error(`truncated at byte ${pos}`);
      this.window = buf.subarray(0, got);
      this.start = pos;
    }
    return this.window.subarray(pos - this.start, pos - this.start + n);
  }

  varint(pos: number): [value: number, next: number] {
    let value = 0;
    for (let i = 0, scale = 1; i < 10; i++, scale *= 128) {
      const b = this.bytes(pos + i, 1)[0]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return [value, pos + i + 1];
    }
    throw new Error(`bad varint at byte ${pos}`);
  }
}

interface Field {
  readonly num: number;
  readonly wire: number;
  /** Varint fields: the value. Length-delimited: the payload's start. */
  readonly value: number;
  /** Length-delimited: the payload's end. */
  readonly end: number;
}

function* fields(r: FileReader, start: number, end: number): Generator<Field> {
  let pos = start;
  while (pos < end) {
    const [tag, at] = r.varint(pos);
    const num = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 0) {
      const [value, next] = r.varint(at);
      yield { num, wire, value, end: next };
      pos = next;
    } else if (wire === 2) {
      const [len, body] = r.varint(at);
      if (body + len > end) throw new Error(`field ${num} runs past its message (byte ${body})`);
      yield { num, wire, value: body, end: body + len };
      pos = body + len;
    } else if (wire === 1 || wire === 5) {
      pos = at + (wire === 1 ? 8 : 4);
      if (pos > end) throw new Error(`field ${num} runs past its message`);
    } else throw new Error(`unsupported wire type ${wire} at byte ${pos}`);
  }
}

const text = (r: FileReader, f: Field) => r.bytes(f.value, f.end - f.value).toString('utf8');
const sub = (f: Field, num: number) => f.wire === 2 && f.num === num;

// Field numbers of onnx.proto (IR version 10): where a TensorProto can occur.
function tensor(r: FileReader, f: Field, out: ExternalTensor[]): void {
  let name = '';
  let location: string | null = null;
  let external = false;
  for (const t of fields(r, f.value, f.end)) {
    if (sub(t, 8)) name = text(r, t);
    else if (t.num === 14 && t.wire === 0)
      external = t.value === 1; // data_location EXTERNAL
    else if (sub(t, 13)) {
      let key = '';
      let value = '';
      for (const e of fields(r, t.value, t.end)) {
        if (sub(e, 1)) key = text(r, e);
        else if (sub(e, 2)) value = text(r, e);
      }
      if (key === 'location') location = value;
    }
  }
  if (external) out.push({ name, location: location ?? '' });
}

function sparse(r: FileReader, f: Field, out: ExternalTensor[]): void {
  for (const s of fields(r, f.value, f.end)) if (sub(s, 1) || sub(s, 2)) tensor(r, s, out);
}

function node(r: FileReader, f: Field, out: ExternalTensor[]): void {
  for (const a of fields(r, f.value, f.end)) {
    if (!sub(a, 5)) continue;
    for (const v of fields(r, a.value, a.end)) {
      if (sub(v, 5) || sub(v, 10)) tensor(r, v, out);
      else if (sub(v, 6) || sub(v, 11)) graph(r, v, out);
      else if (sub(v, 22) || sub(v, 23)) sparse(r, v, out);
    }
  }
}

function graph(r: FileReader, f: Field, out: ExternalTensor[]): void {
  for (const g of fields(r, f.value, f.end)) {
    if (sub(g, 1)) node(r, g, out);
    else if (sub(g, 5)) tensor(r, g, out);
    else if (sub(g, 15)) sparse(r, g, out);
  }
}

/** Every tensor of an .onnx file (graph, subgraphs, node attributes, functions) that is external data. */
export function externalTensors(path: string): ExternalTensor[] {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const r = new FileReader(fd, size);
    const out: ExternalTensor[] = [];
    for (const m of fields(r, 0, size)) {
      if (sub(m, 7)) {
        graph(r, m, out);
      } else if (sub(m, 25)) {
        for (const fn of fields(r, m.value, m.end)) if (sub(fn, 7)) node(r, fn, out); // FunctionProto.node
      } else if (sub(m, 20)) {
        for (const g of fields(r, m.value, m.end)) if (sub(g, 1) || sub(g, 2)) graph(r, g, out); // training_info
      }
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * `file` (a graph of the bundle at `dir`) reads external data only from plain file names that bundle.json
 * lists; otherwise a clear error naming the graph, the tensor and the location.
 */
export function checkExternalData(dir: string, file: string, manifest: BundleManifest): void {
  const path = join(dir, file);
  let tensors: ExternalTensor[];
  try {
    tensors = externalTensors(path);
  } catch (err) {
    throw invalid(`${path}: not a readable ONNX model (${(err as Error).message})`, { file });
  }
  for (const t of tensors) {
    const where = `${path}: tensor ${JSON.stringify(t.name)} reads external data from ${JSON.stringify(t.location)}`;
    if (!PLAIN_NAME.test(t.location))
      throw invalid(`${where}, which is not a plain file name inside the bundle folder`, {
        file,
        location: t.location,
      });
    if (!(t.location in manifest.files))
      throw invalid(`${where}, which is not one of the files bundle.json lists (so its bytes are not checked)`, {
        file,
        location: t.location,
      });
  }
}
