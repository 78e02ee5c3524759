// The offline generator's edit operators: each rewrites the body of a SKILL.md and
// never its frontmatter, deterministically for a given text, test words and random stream. An operator
// that has nothing to change returns null.
import { framed, itemLines, itemText, readSkill, settle, writeSkill, type SkillSection } from './skill-text';
import { overlap } from './test-words';

export const OPERATORS = ['move_rule_up', 'checklist', 'drop_unused', 'merge_duplicates'] as const;
export type OperatorName = (typeof OPERATORS)[number];

export interface OperatorContext {
  /** Words the skill's tests use (test-words.ts); empty when it has no tests. */
  words: ReadonlyMap<string, number>;
  /** Uniform in [0, 1), seeded. */
  random: () => number;
}

export interface Edit {
  text: string;
  /** What changed, in a line. */
  note: string;
}

/** Items of a checklist the operator writes (the rules most tests touch come first). */
const CHECKLIST_MAX = 12;
const CHECKLIST_HEADING = '## Checklist';

const sectionText = (s: SkillSection) => [s.heading, ...s.lines].join('\n');
const norm = (line: string) =>
  (itemText(line) ?? line)
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.;:!]+$/, '')
    .trim();
const title = (s: SkillSection) => s.heading.replace(/^#+\s+/, '').trim();

/** The section the tests use most (ties broken by the random stream), moved to be the first section. */
function moveRuleUp(text: string, ctx: OperatorContext): Edit | null {
  const skill = readSkill(text);
  if (skill.sections.length < 2) return null;
  const scored = skill.sections.map((s, i) => ({
    i,
    score: ctx.words.size ? overlap(sectionText(s), ctx.words) : itemLines(s.lines).length > 0 ? 1 : 0,
  }));
  const rest = scored.slice(1).filter((s) => s.score > 0);
  if (!rest.length) return null;
  const top = Math.max(...rest.map((s) => s.score));
  if (top <= scored[0]!.score && ctx.words.size) return null; // the first section is already the one
  const ties = rest.filter((s) => s.score === top);
  const pick = ties[Math.floor(ctx.random() * ties.length)]!.i;
  const [moved] = skill.sections.splice(pick, 1);
  skill.sections.unshift(moved!);
  return { text: writeSkill(settle(skill)), note: `moved "${title(moved!)}" to the top` };
}

/** The rules (list items) of the sections tests use, restated as a checklist before every section. */
function checklist(text: string, ctx: OperatorContext): Edit | null {
  const skill = readSkill(text);
  if (!skill.sections.length || skill.sections[0]!.heading.trim() === CHECKLIST_HEADING) return null;
  const rules: { text: string; score: number; order: number }[] = [];
  const seen = new Set<string>();
  for (const s of skill.sections) {
    for (const i of itemLines(s.lines)) {
      const rule = itemText(s.lines[i]!)!;
      const key = norm(rule);
      const score = ctx.words.size ? overlap(`${title(s)} ${rule}`, ctx.words) : 1;
      if (score === 0 || seen.has(key)) continue;
      seen.add(key);
      rules.push({ text: rule, score, order: rules.length });
    }
  }
  if (!rules.length) return null;
  const kept = [...rules]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, CHECKLIST_MAX)
    .sort((a, b) => a.order - b.order);
  skill.sections.unshift({ heading: CHECKLIST_HEADING, lines: framed(kept.map((r) => `- [ ] ${r.text}`)) });
  return { text: writeSkill(settle(skill)), note: `restated ${kept.length} rules as a checklist at the top` };
}

/** Every section that shares no word with any test is dropped (at least one section stays). */
function dropUnused(text: string, ctx: OperatorContext): Edit | null {
  if (!ctx.words.size) return null;
  const skill = readSkill(text);
  const used = skill.sections.map((s) => overlap(sectionText(s), ctx.words) > 0);
  const dropped = skill.sections.filter((_, i) => !used[i]);
  if (!dropped.length || dropped.length === skill.sections.length) return null;
  skill.sections = skill.sections.filter((_, i) => used[i]);
  const names = dropped.map((s) => `"${title(s)}"`);
  return {
    text: writeSkill(settle(skill)),
    note: `dropped ${dropped.length} section${dropped.length > 1 ? 's' : ''} no test uses: ${names.slice(0, 4).join(', ')}${names.length > 4 ? ', …' : ''}`,
  };
}

/** Sections with the same heading become one; a line (or rule) said before is dropped. */
function mergeDuplicates(text: string): Edit | null {
  const skill = readSkill(text);
  let merged = 0;
  const byTitle = new Map<string, SkillSection>();
  const sections: SkillSection[] = [];
  for (const s of skill.sections) {
    const key = `${s.heading.match(/^#+/)![0]} ${title(s).toLowerCase()}`;
    const first = byTitle.get(key);
    if (first) {
      first.lines = framed([...first.lines, '', ...s.lines]);
      merged++;
    } else {
      byTitle.set(key, s);
      sections.push(s);
    }
  }
  skill.sections = sections;
  let dropped = 0;
  const seen = new Set<string>();
  const dedupe = (lines: string[]): string[] => {
    let fenced = false;
    return lines.filter((line) => {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      if (fenced || line.trim() === '' || /^#/.test(line)) return true;
      const key = norm(line);
      if (key.length < 12 || !seen.has(key)) return (seen.add(key), true); // short lines repeat by nature
      dropped++;
      return false;
    });
  };
  skill.head = dedupe(skill.head);
  for (const s of skill.sections) s.lines = dedupe(s.lines);
  if (!merged && !dropped) return null;
  const parts = [
    ...(merged ? [`merged ${merged} section${merged > 1 ? 's' : ''} with a repeated heading`] : []),
    ...(dropped ? [`dropped ${dropped} repeated line${dropped > 1 ? 's' : ''}`] : []),
  ];
  return { text: writeSkill(settle(skill)), note: parts.join('; ') };
}

export const OPERATOR_TABLE: Record<OperatorName, (text: string, ctx: OperatorContext) => Edit | null> = {
  move_rule_up: moveRuleUp,
  checklist,
  drop_unused: dropUnused,
  merge_duplicates: (text) => mergeDuplicates(text),
};

export function applyOperator(name: OperatorName, text: string, ctx: OperatorContext): Edit | null {
  const edit = OPERATOR_TABLE[name](text, ctx);
  return edit && edit.text !== text ? edit : null;
}
