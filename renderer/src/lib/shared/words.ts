// One vocabulary on screen (docs/guide.md, "Words"): the API's internal names for where a skill is
// (`instant`, `in_context`, …; `pskills eval` reports say `parametric`), for how an adapter was made
// (`instant`, `ema`, …) and for evolve's edit operators (`move_rule_up`) become the words every page
// uses: instant, distilled, in context, no skill, wrong skill, merged, global. tests/unit/renderer/words.test.ts and the every-page browser
// test fail when a raw name reaches the screen.

/** Where the skill is, for a verify mode, an evolve score or a trajectory's condition. */
const CONDITION_WORDS: Record<string, string> = {
  parametric: 'instant',
  instant: 'instant',
  distilled: 'distilled',
  distilled_zero: 'distilled from zero',
  in_context: 'in context',
  none: 'no skill',
  wrong_skill: 'wrong skill',
  adapter: 'an adapter',
  global: 'global',
  merged: 'merged',
};

export function conditionWord(name: string): string {
  return CONDITION_WORDS[name] ?? name.replace(/_/g, ' ');
}

/** How an adapter was made (its recipe's kind). */
const KIND_WORDS: Record<string, string> = {
  instant: 'instant',
  distill: 'distilled',
  merge: 'merged',
  ema: 'global',
  import: 'imported',
};

export function kindWord(kind: string): string {
  return KIND_WORDS[kind] ?? kind.replace(/_/g, ' ');
}

/** An evolve edit operator or any other snake_case name, in words ("move rule up"). */
export function plainName(name: string): string {
  return name.replace(/_/g, ' ');
}

/** Names that must never be read on a page: the test of a rendered page's text uses it. */
export const INTERNAL_NAMES =
  /\b(parametric|in_context|wrong_skill|distilled_zero|move_rule_up|[a-z]+(?:_[a-z]+){2,})\b/;
