// An Ollama Modelfile for a base GGUF plus our LoRA (docs/guide.md "Ollama"). Values are written the way
// Ollama's parser (ollama/parser/parser.go) reads them back: a value runs to the end of its line and is
// trimmed; one that starts and ends with `"` loses those two quotes and nothing else (no escapes); one
// inside `"""…"""` may span lines. Characters it drops (control characters other than tab and newline)
// cannot be written, nor can a one-line value hold a newline: such paths are refused, naming them.

export class ModelfileError extends Error {}

// Go's strconv.IsPrint is false for these (C0, DEL, C1 controls); the parser drops them silently.
const dropped = (s: string): boolean =>
  [...s].some((ch) => {
    const c = ch.codePointAt(0)!;
    return (c < 0x20 && ch !== '\t' && ch !== '\n' && ch !== '\r') || (c >= 0x7f && c <= 0x9f);
  });

/** One-line value (a path, a stop string) as Ollama reads it back exactly. */
export function modelfileValue(value: string, what: string): string {
  if (value.length === 0) throw new ModelfileError(`${what}: empty`);
  if (/[\r\n]/.test(value))
    throw new ModelfileError(`${what} ${JSON.stringify(value)}: a Modelfile value cannot hold a line break`);
  if (dropped(value))
    throw new ModelfileError(
      `${what} ${JSON.stringify(value)}: holds a control character Ollama's Modelfile parser drops`,
    );
  // Unquoted unless trimming would change it or a leading quote would be taken as quoting.
  const plain = value.trim() === value && !value.startsWith('"');
  if (plain) return value;
  if (value.startsWith('""'))
    throw new ModelfileError(`${what} ${JSON.stringify(value)}: starts with "", which reads as a block`);
  return `"${value}"`;
}

/** A multi-line value in triple quotes; refused when it holds `"""` or ends in `"` (unreadable back). */
export function modelfileBlock(value: string, what: string): string {
  if (value.includes('"""')) throw new ModelfileError(`${what}: holds """, which ends a Modelfile block`);
  if (dropped(value)) throw new ModelfileError(`${what}: holds a control character Ollama's Modelfile parser drops`);
  return `"""${value}"""`;
}

// Go templates (text/template, Ollama's .Messages form) for the chat formats whose Jinja maps simply.
const CHATML_GO =
  '{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n';
const LLAMA3_GO =
  '{{- range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>\n\n{{ .Content }}<|eot_id|>' +
  '{{ end }}<|start_header_id|>assistant<|end_header_id|>\n\n';

/** The Go form of a Jinja chat template by its markers, with its name and the default system message
 * the Jinja inserts when a chat has none (SmolLM2's, Qwen2.5's; Ollama's SYSTEM does the same); null
 * when it does not map simply. */
export function goTemplateOf(jinja: string | null): { name: string; template: string; system: string | null } | null {
  if (!jinja) return null;
  if (jinja.includes('<|im_start|>') && jinja.includes('<|im_end|>')) {
    // A literal '<|im_start|>system⏎…<|im_end|>' in the Jinja source, its line break written as \n or as is.
    const m = /<\|im_start\|>system(?:\\n|\n)([^'"<{}]+)<\|im_end\|>/.exec(jinja);
    return { name: 'ChatML', template: CHATML_GO, system: m ? m[1]!.replace(/\\n/g, '\n') : null };
  }
  if (jinja.includes('<|start_header_id|>') && jinja.includes('<|eot_id|>'))
    return { name: 'Llama 3', template: LLAMA3_GO, system: null };
  return null;
}

export interface ModelfileInput {
  /** absolute path of the base GGUF */
  from: string;
  /** the adapter, relative to the Modelfile's folder (Ollama resolves it there) or absolute */
  adapter: string;
  chatTemplate: string | null;
  stops: readonly string[];
  /** header comment lines (provenance) */
  comments?: readonly string[];
}

export function buildModelfile(m: ModelfileInput): string {
  const lines = (m.comments ?? []).map((c) => `# ${c.replace(/[\r\n]+/g, ' ')}`);
  lines.push(`FROM ${modelfileValue(m.from, 'base GGUF path')}`);
  lines.push(`ADAPTER ${modelfileValue(m.adapter, 'adapter path')}`);
  const go = goTemplateOf(m.chatTemplate);
  if (go) {
    lines.push(`# TEMPLATE: the bundle's ${go.name} chat template, in Ollama's Go-template form`);
    lines.push(`TEMPLATE ${modelfileBlock(go.template, 'chat template')}`);
    if (go.system) lines.push(`SYSTEM ${modelfileBlock(go.system, "the chat template's default system message")}`);
  } else if (m.chatTemplate)
    lines.push(
      "# TEMPLATE: the bundle's Jinja chat template has no simple Go-template form; Ollama uses the one it derives from the base GGUF",
    );
  else lines.push('# TEMPLATE: the bundle has no chat template');
  for (const s of m.stops) {
    try {
      lines.push(`PARAMETER stop ${modelfileValue(s, 'stop string')}`);
    } catch (err) {
      lines.push(`# stop token ${JSON.stringify(s)} not written: ${(err as Error).message}`);
    }
  }
  return lines.join('\n') + '\n';
}
