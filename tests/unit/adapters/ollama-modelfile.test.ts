// The Modelfile for `--format ollama`, read back by a port of Ollama's own parser (ollama/parser/parser.go,
// ParseFile: its states, unquote and the runes it drops), so paths with spaces and quotes are shown to
// come back exactly as Ollama will read them.
import { describe, expect, it } from 'vitest';
import { buildModelfile, goTemplateOf, modelfileValue } from '../../../main/adapters/ollama-modelfile';

type Cmd = { name: string; args: string };

/** ParseFile of parser.go, state for state. */
function ollamaParse(text: string): Cmd[] {
  const isSpace = (r: string) => r === ' ' || r === '\t';
  const isNewline = (r: string) => r === '\r' || r === '\n';
  const isAlpha = (r: string) => /^[A-Za-z]$/.test(r);
  const isPrint = (r: string) => {
    const c = r.codePointAt(0)!;
    return !(c < 0x20 || (c >= 0x7f && c <= 0x9f));
  };
  const unquote = (s: string): [string, boolean] => {
    if (s.length >= 3 && s.startsWith('"""'))
      return s.length >= 6 && s.endsWith('"""') ? [s.slice(3, -3), true] : ['', false];
    if (s.length >= 1 && s[0] === '"') return s.length >= 2 && s.endsWith('"') ? [s.slice(1, -1), true] : ['', false];
    return [s, true];
  };
  type State = 'nil' | 'name' | 'value' | 'parameter' | 'comment';
  const next = (r: string, cs: State): [State, string] => {
    switch (cs) {
      case 'nil':
        if (r === '#') return ['comment', ''];
        if (isSpace(r) || isNewline(r)) return ['nil', ''];
        return ['name', r];
      case 'name':
        if (isAlpha(r)) return ['name', r];
        if (isSpace(r)) return ['value', ''];
        throw new Error('invalid command');
      case 'value':
        return [isNewline(r) || isSpace(r) ? 'nil' : 'value', r];
      case 'parameter':
        if (isAlpha(r) || /[0-9_]/.test(r)) return ['parameter', r];
        if (isSpace(r)) return ['value', ''];
        throw new Error('unexpected EOF');
      case 'comment':
        return [isNewline(r) ? 'nil' : 'comment', ''];
    }
  };
  const out: Cmd[] = [];
  let cmd = { name: '', args: '' };
  let curr: State = 'nil';
  let b = '';
  for (const ch of text) {
    const [nextState, r] = next(ch, curr);
    let state = nextState;
    if (state !== curr) {
      if (curr === 'name') {
        const s = b.toLowerCase();
        if (s === 'parameter') state = 'parameter';
        else cmd.name = s === 'from' ? 'model' : s;
      } else if (curr === 'parameter') cmd.name = b;
      else if (curr === 'value') {
        const [s, ok] = unquote(b.trim());
        if (!ok || isSpace(r)) {
          b += r;
          continue;
        }
        cmd.args = s;
        out.push(cmd);
        cmd = { name: '', args: '' };
      }
      b = '';
      curr = state;
    }
    if (r && isPrint(r)) b += r;
  }
  if (curr === 'value') {
    const [s, ok] = unquote(b.trim());
    if (!ok) throw new Error('unexpected EOF');
    out.push({ ...cmd, args: s });
  } else if (curr !== 'nil' && curr !== 'comment') throw new Error('unexpected EOF');
  return out;
}

const CHATML_JINJA =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

describe('Ollama Modelfile', () => {
  it('paths with spaces, quotes, a trailing space and non-ASCII come back exactly', () => {
    const paths = [
      '/home/a b/My Models/tiny model.gguf',
      '/home/q/"quoted" name.gguf',
      '/home/q/it\'s "both".gguf',
      '/home/t/ends in a space .gguf ',
      '/home/t/ends with a quote"',
      '/home/ü/模型.gguf',
      'C:\\Users\\A B\\model.gguf',
    ];
    for (const from of paths) {
      const text = buildModelfile({
        from,
        adapter: './adapter.gguf',
        chatTemplate: CHATML_JINJA,
        stops: ['<|im_end|>'],
      });
      const cmds = ollamaParse(text);
      expect(cmds.find((c) => c.name === 'model')!.args).toBe(from);
      expect(cmds.find((c) => c.name === 'adapter')!.args).toBe('./adapter.gguf');
    }
  });

  it('carries the chat template in Go form and the stop strings', () => {
    const text = buildModelfile({
      from: '/m/base.gguf',
      adapter: './adapter.gguf',
      chatTemplate: CHATML_JINJA,
      stops: ['<|im_end|>', '<|endoftext|>', ' padded '],
      comments: ['made by pskills'],
    });
    const cmds = ollamaParse(text);
    expect(cmds.map((c) => c.name)).toEqual(['model', 'adapter', 'template', 'stop', 'stop', 'stop']);
    expect(cmds[2]!.args).toBe(goTemplateOf(CHATML_JINJA)!.template);
    expect(cmds[2]!.args).toContain('{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>');
    expect(cmds.slice(3).map((c) => c.args)).toEqual(['<|im_end|>', '<|endoftext|>', ' padded ']);
    expect(text).toMatch(/^# made by pskills\n/);
  });

  it("keeps the template's default system message (SmolLM2's form) as SYSTEM", () => {
    const smol =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}";
    const cmds = ollamaParse(buildModelfile({ from: '/m/b.gguf', adapter: './a.gguf', chatTemplate: smol, stops: [] }));
    expect(cmds.find((c) => c.name === 'system')!.args).toBe(
      'You are a helpful AI assistant named SmolLM, trained by Hugging Face',
    );
    expect(goTemplateOf(CHATML_JINJA)!.system).toBeNull();
    // SmolLM2's GGUF holds the same template with real line breaks inside its strings.
    expect(goTemplateOf(smol.replaceAll('\\n', '\n'))!.system).toBe(
      'You are a helpful AI assistant named SmolLM, trained by Hugging Face',
    );
  });

  it('says so in a comment when the Jinja template has no simple Go form', () => {
    const text = buildModelfile({
      from: '/m/b.gguf',
      adapter: './a.gguf',
      chatTemplate: '{{ bos_token }}{{ x }}',
      stops: [],
    });
    expect(text).toMatch(/# TEMPLATE: the bundle's Jinja chat template has no simple Go-template form/);
    expect(ollamaParse(text).map((c) => c.name)).toEqual(['model', 'adapter']);
  });

  it('refuses a value the parser cannot read back, naming it', () => {
    expect(() => modelfileValue('/a\nb.gguf', 'base GGUF path')).toThrow(
      /base GGUF path "\/a\\nb\.gguf": .*line break/,
    );
    expect(() => modelfileValue('/a\u0007b.gguf', 'base GGUF path')).toThrow(/control character/);
    expect(() => buildModelfile({ from: '/x\ny', adapter: './a.gguf', chatTemplate: null, stops: [] })).toThrow(
      /base GGUF path/,
    );
  });
});
