// The sessions a bundle has, as a table (transformers.js session_config.js): which manifest entry
// names the file, and what its graph must look like. Adding a graph (hypernet.onnx) adds a row.
import { EngineError } from './errors';
import type { BundleManifest } from './manifest';
import type { Session } from './ort';
import type { TensorSpec } from './feed-check';

/** A dimension the graph must have: a fixed size, or `null` = must be symbolic (varies per run). */
type Dim = number | null;
interface Expected {
  readonly type: string;
  readonly dims: readonly Dim[];
}

export interface SessionRow {
  readonly key: 'lm' | 'encoder' | 'hypernet';
  /** Whether this bundle has the graph (encoder.onnx and hypernet.onnx are optional). */
  present(m: BundleManifest): boolean;
  file(m: BundleManifest): string;
  inputs(m: BundleManifest): Map<string, Expected>;
  outputs(m: BundleManifest): Map<string, Expected>;
}

/** Every graph name the templates stand for: `{i}` over layers (LoRA: lora.layers), `{module}` over
 * targets, `{group}` over lora.groups. */
type SpecOf = (m: BundleManifest, template: string, target?: { d_in: number; d_out: number }) => Expected;

function expand(m: BundleManifest, templates: readonly string[], spec: SpecOf): Map<string, Expected> {
  const out = new Map<string, Expected>();
  const layers = Array.from({ length: m.architecture.layers }, (_, i) => i);
  for (const t of templates) {
    if (t.includes('{group}')) {
      for (const i of m.lora.layers)
        for (const g of m.lora.groups ?? [])
          out.set(t.replace('{i}', `${i}`).replace('{group}', g.name), spec(m, t, g));
    } else if (t.includes('{module}')) {
      for (const i of m.lora.layers)
        for (const target of m.lora.targets)
          out.set(t.replace('{i}', `${i}`).replace('{module}', target.module), spec(m, t, target));
    } else if (t.includes('{i}')) {
      for (const i of layers) out.set(t.replace('{i}', `${i}`), spec(m, t));
    } else out.set(t, spec(m, t));
  }
  return out;
}

const f32 = (dims: Dim[]): Expected => ({ type: 'float32', dims });

const lmSpec: SpecOf = (m, template, target) => {
  const a = m.architecture;
  switch (template) {
    case 'input_ids':
    case 'attention_mask':
    case 'position_ids':
      return { type: 'int64', dims: [null, null] };
    case 'logits_to_keep':
      return { type: 'int64', dims: [1] };
    case 'past_key_values.{i}.key':
    case 'past_key_values.{i}.value':
    case 'present.{i}.key':
    case 'present.{i}.value':
      return f32([null, a.kv_heads, null, a.head_dim]);
    case 'step.{i}.key':
    case 'step.{i}.value':
      return f32([null, null, a.kv_heads * a.head_dim]);
    case 'lora.{i}.{module}.A':
    case 'lora.{i}.{group}.A':
      return f32([null, target!.d_in, null]);
    case 'lora.{i}.{module}.B':
    case 'lora.{i}.{group}.B':
      return f32([null, null, target!.d_out]);
    case 'logits':
      return f32([null, null, a.vocab]);
    case 'hidden_states':
      return f32([null, null, a.hidden]);
  }
  throw new EngineError('internal', `no spec for graph name template ${template}`);
};

/** hypernet.onnx: states [1, n, d_enc], mask [1, n] → A.{module} [L, d_in, r], B.{module} [L, r, d_out]
 * with L = len(lora.layers); `{module}` runs over lora.targets (no `{i}`: layers are stacked). */
function hypernetIO(m: BundleManifest, templates: readonly string[]): Map<string, Expected> {
  const h = m.hypernet!;
  const L = m.lora.layers.length;
  const out = new Map<string, Expected>();
  for (const t of templates) {
    if (t === 'states') out.set(t, f32([1, null, h.d_enc]));
    else if (t === 'mask') out.set(t, f32([1, null]));
    else if (t === 'A.{module}') for (const x of m.lora.targets) out.set(`A.${x.module}`, f32([L, x.d_in, h.rank]));
    else if (t === 'B.{module}') for (const x of m.lora.targets) out.set(`B.${x.module}`, f32([L, h.rank, x.d_out]));
    else throw new EngineError('internal', `no spec for hypernet name template ${t}`);
  }
  return out;
}

export const SESSION_TABLE: readonly SessionRow[] = [
  {
    key: 'lm',
    present: () => true,
    file: (m) => m.io.lm.file,
    inputs: (m) => expand(m, m.io.lm.inputs, lmSpec),
    outputs: (m) => expand(m, m.io.lm.outputs, lmSpec),
  },
  {
    key: 'encoder',
    present: (m) => m.io.encoder !== undefined,
    file: (m) => m.io.encoder!.file,
    inputs: (m) => expand(m, m.io.encoder!.inputs, lmSpec),
    outputs: (m) => expand(m, m.io.encoder!.outputs, lmSpec),
  },
  {
    key: 'hypernet',
    present: (m) => m.hypernet !== null,
    file: (m) => m.hypernet!.file,
    inputs: (m) => hypernetIO(m, m.hypernet!.inputs),
    outputs: (m) => hypernetIO(m, m.hypernet!.outputs),
  },
];

/** Compares a session's metadata with its row; the error names the file, tensor and dimension. */
export function checkSessionIO(row: SessionRow, session: Session, m: BundleManifest): void {
  const file = row.file(m);
  const fail = (message: string): never => {
    throw new EngineError('invalid_input', `${file} does not match bundle.json: ${message}`, { file });
  };
  for (const [kind, want, got] of [
    ['input', row.inputs(m), session.inputs],
    ['output', row.outputs(m), session.outputs],
  ] as const) {
    const actual = new Map(got.map((s: TensorSpec) => [s.name, s]));
    for (const name of actual.keys()) if (!want.has(name)) fail(`unexpected ${kind} '${name}'`);
    for (const [name, exp] of want) {
      const spec = actual.get(name);
      if (!spec) return fail(`${kind} '${name}' is missing`);
      if (spec.type !== exp.type) fail(`${kind} '${name}' is ${spec.type}, expected ${exp.type}`);
      if (spec.dims.length !== exp.dims.length)
        fail(`${kind} '${name}' has rank ${spec.dims.length}, expected ${exp.dims.length}`);
      exp.dims.forEach((d, axis) => {
        const g = spec.dims[axis];
        if (d === null && typeof g === 'number')
          fail(`${kind} '${name}' dimension ${axis} is fixed to ${g}; format v1 has it symbolic`);
        if (d !== null && g !== d) fail(`${kind} '${name}' dimension ${axis} is ${g}, bundle.json says ${d}`);
      });
    }
  }
}
