// The regex subset SkillWorld checker specs may use, where JS RegExp (flag u) and Python `re`
// (re.ASCII) agree. One-to-one port of training/src/pskills_train/skillworld/pattern.py; the shared
// case file tests/fixtures/skillworld/checker-cases.json keeps the two in step.

const SYNTAX = new Set('^$\\.*+?()[]{}|/');
const CLASS_ESCAPES = new Set('dDwWsS');
const ESCAPES = new Set([...CLASS_ESCAPES, ...'bBnt']);
const MAX_REPEAT = 1000;

export class PatternError extends Error {}

const isDigits = (s: string) => /^[0-9]+$/.test(s);

/** Throws PatternError (with the offset) when p leaves the subset. */
export function validatePattern(p: string): void {
  for (let i = 0; i < p.length; i++) {
    const code = p.charCodeAt(i);
    if (code < 0x20 || code > 0x7e)
      throw new PatternError(`character ${JSON.stringify(p[i])} at ${i}: only printable ASCII (use \\n, \\t)`);
  }
  let depth = 0;
  let i = 0;
  let canRepeat = false;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '\\') {
      const e = p[i + 1] ?? '';
      if (!ESCAPES.has(e) && !SYNTAX.has(e)) throw new PatternError(`escape \\${e} at ${i} is not allowed`);
      canRepeat = e !== 'b' && e !== 'B';
      i += 2;
    } else if (c === '(') {
      if (p.startsWith('(?', i) && !p.startsWith('(?:', i))
        throw new PatternError(`group at ${i}: only (...) and (?:...)`);
      depth++;
      i += p.startsWith('(?:', i) ? 3 : 1;
      canRepeat = false;
    } else if (c === ')') {
      if (depth === 0) throw new PatternError(`unbalanced ')' at ${i}`);
      depth--;
      i++;
      canRepeat = true;
    } else if (c === '[') {
      i = classEnd(p, i);
      canRepeat = true;
    } else if ('*+?{'.includes(c)) {
      if (!canRepeat) throw new PatternError(`quantifier at ${i} has nothing to repeat`);
      i = quantifierEnd(p, i);
      if (p[i] === '?') i++;
      canRepeat = false;
    } else if (c === ']' || c === '}') {
      throw new PatternError(`unescaped '${c}' at ${i}`);
    } else {
      canRepeat = !'|^$'.includes(c);
      i++;
    }
  }
  if (depth) throw new PatternError("unbalanced '('");
}

function quantifierEnd(p: string, i: number): number {
  if (p[i] !== '{') return i + 1;
  const end = p.indexOf('}', i);
  const body = end > 0 ? p.slice(i + 1, end) : '';
  const comma = body.indexOf(',');
  const lo = comma < 0 ? body : body.slice(0, comma);
  const hi = comma < 0 ? '' : body.slice(comma + 1);
  if (!isDigits(lo) || (hi && !isDigits(hi))) {
    throw new PatternError(`'{' at ${i} must start a quantifier {m}, {m,} or {m,n} (escape it as \\{)`);
  }
  if (Number(lo) > MAX_REPEAT || (hi && (Number(hi) > MAX_REPEAT || Number(hi) < Number(lo)))) {
    throw new PatternError(`quantifier at ${i}: need m <= n <= ${MAX_REPEAT}`);
  }
  return end + 1;
}

/** Index after the class that opens at i. */
function classEnd(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '^') j++;
  const atoms: (string | null)[] = []; // a literal char, or null for \d-like escapes and ranges
  const escaped = (e: string): string | null =>
    e === 'n' ? '\n' : e === 't' ? '\t' : SYNTAX.has(e) || e === '-' ? e : null;
  for (;;) {
    if (j >= p.length) throw new PatternError(`class at ${i} is not closed`);
    const c = p[j]!;
    if (c === ']') break;
    if (c === '\\') {
      const e = p[j + 1] ?? '';
      if (CLASS_ESCAPES.has(e)) atoms.push(null);
      else if (escaped(e) !== null) atoms.push(escaped(e));
      else throw new PatternError(`escape \\${e} at ${j} is not allowed in a class`);
      j += 2;
      continue;
    }
    if (c === '[' || ['&&', '~~', '||', '--'].some((d) => p.startsWith(d, j))) {
      throw new PatternError(`'${p.slice(j, j + 2)}' at ${j} in a class: escape it`);
    }
    if (c === '-' && atoms.length && j + 1 < p.length && p[j + 1] !== ']') {
      const lo = atoms[atoms.length - 1];
      const next = p[j + 1]!;
      const hi = next === '\\' ? escaped(p[j + 2] ?? '') : next;
      if (lo === null || lo === undefined || hi === null || lo.charCodeAt(0) > hi.charCodeAt(0)) {
        throw new PatternError(`bad range at ${j - 1} in a class`);
      }
      atoms[atoms.length - 1] = null;
      j += next === '\\' ? 3 : 2;
      continue;
    }
    atoms.push(c);
    j++;
  }
  if (!atoms.length) throw new PatternError(`empty class at ${i}`);
  return j + 1;
}
