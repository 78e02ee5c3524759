// The tiny bundle fixture (training/scripts/make_fixture_bundle.py) and its PyTorch oracle.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoraPair, TargetKey } from '../../../main/adapters/types';
import { engineAdapter, type EngineAdapter } from '../../../main/engine/adapter';
import { APP_ROOT } from '../../../main/paths';

export const FIXTURE_DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny');

interface Run {
  logit_positions: number[];
  logits: number[][];
  /** encoder.layer's hidden state at the last prompt position */
  hidden_last: number[];
  greedy: number[];
  greedy_text: string;
}
export interface Oracle {
  tolerance: number;
  adapters: Record<string, { file: string; rank: number; seed: number }>;
  tokenizer: { text: string; ids: number[]; decoded: string }[];
  chat: { messages: { role: string; content: string }[]; add_generation_prompt: boolean; rendered: string }[];
  prompts: { name: string; text: string; ids: number[]; runs: Record<'none' | 'r4', Run> }[];
  batch: {
    rows: { prompt: string; adapter: string | null; ids: number[] }[];
    pad: number;
    last_logits: number[][];
    greedy: number[][];
  };
}

export const oracle: Oracle = JSON.parse(readFileSync(join(FIXTURE_DIR, 'oracle.json'), 'utf8'));

/** safetensors: u64 header length, JSON header {name: {dtype, shape, data_offsets}}, raw little-endian data. */
function readSafetensors(path: string): Map<string, { shape: number[]; data: Float32Array }> {
  const buf = readFileSync(path);
  const headerLen = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8')) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (t.dtype !== 'F32') throw new Error(`${path}: ${name} is ${t.dtype}, expected F32`);
    const bytes = buf.subarray(8 + headerLen + t.data_offsets[0], 8 + headerLen + t.data_offsets[1]);
    out.set(name, {
      shape: t.shape,
      data: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
    });
  }
  return out;
}

/** A fixture adapter: keys `lora.{i}.{module}.A` [d_in, r] / `.B` [r, d_out], scale already folded. */
export function fixtureAdapter(name: string): EngineAdapter {
  const tensors = readSafetensors(join(FIXTURE_DIR, oracle.adapters[name]!.file));
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, a] of tensors) {
    const m = /^lora\.(\d+)\.(\w+)\.A$/.exec(key);
    if (!m) continue;
    const b = tensors.get(key.replace(/\.A$/, '.B'))!;
    targets.set(`${Number(m[1])}.${m[2]!}`, { dIn: a.shape[0]!, dOut: b.shape[1]!, A: a.data, B: b.data });
  }
  return engineAdapter(oracle.adapters[name]!.rank, targets);
}

/** A writable copy of the fixture bundle, to break in one way. */
export function copyFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pskills-bundle-'));
  cpSync(FIXTURE_DIR, dir, { recursive: true });
  return dir;
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

/** A copy of the tiny train-step fixture with a 2×128 bucket added beside its 2×16 one, for rows longer
 * than 16 tokens (tests/fixtures/train-step-2x128, training/scripts/make_fixture_train_step_long.py). */
export function withLongBucket(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pskills-long-bucket-'));
  cpSync(join(APP_ROOT, 'tests/fixtures/bundle-tiny-train'), dir, { recursive: true });
  const extra = join(APP_ROOT, 'tests/fixtures/train-step-2x128');
  const patch = JSON.parse(readFileSync(join(extra, 'bucket.json'), 'utf8')) as {
    bucket: { file: string };
    files: Record<string, unknown>;
  };
  cpSync(join(extra, patch.bucket.file), join(dir, patch.bucket.file));
  const m = JSON.parse(readFileSync(join(dir, 'bundle.json'), 'utf8')) as {
    files: Record<string, unknown>;
    train_step: { buckets: unknown[] };
  };
  m.files = { ...m.files, ...patch.files };
  m.train_step.buckets = [...m.train_step.buckets, patch.bucket];
  writeFileSync(join(dir, 'bundle.json'), JSON.stringify(m, null, 2));
  return dir;
}
