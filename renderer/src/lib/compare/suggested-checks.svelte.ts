// The compare page's suggested checkers (common/verify/suggest.ts): the rules read off the version's
// text, and "Add as a test", which stores the checker with the compare prompt as one of the version's
// tests (verify.setTests) so the next comparison marks every column ✓/✗.
import { describeExpect } from '../../../../common/verify/describe';
import { suggestCheckers, type Suggestion } from '../../../../common/verify/suggest';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';
import type { CompareRun } from './compare-run.svelte';

export class SuggestedChecks {
  suggestions = $state.raw<Suggestion[]>([]);
  /** Rules already stored as tests in this session, by index. */
  added = $state.raw<number[]>([]);
  error = $state.raw<UiError | null>(null);
  busy = $state(false);
  private loadedFor = '';

  async load(ref: { name: string; version: number }): Promise<void> {
    const key = `${ref.name}@${ref.version}`;
    if (this.loadedFor === key) return;
    this.loadedFor = key;
    try {
      const skill = await studio.skills.get(ref);
      if (this.loadedFor === key) this.suggestions = suggestCheckers(skill.content);
    } catch {
      if (this.loadedFor === key) this.suggestions = [];
    }
  }

  describe(s: Suggestion): string {
    return describeExpect(s.expect);
  }

  /** Stores suggestion `i` as a test of the version with the compare prompt; compare then marks it. */
  async add(i: number, ref: { name: string; version: number }, compare: CompareRun): Promise<boolean> {
    const s = this.suggestions[i];
    const prompt = compare.prompt.trim();
    if (!s || !prompt || this.busy) return false;
    this.busy = true;
    this.error = null;
    try {
      const current = await studio.verify.tests(ref);
      const ids = current.tests.map((t) => t.id);
      let n = 1;
      while (ids.includes(`suggested-${s.kind}-${n}`)) n++;
      const id = `suggested-${s.kind}-${n}`;
      await studio.verify.setTests({ ...ref, tests: [...current.tests, { id, prompt, expect: s.expect }] });
      compare.addChecks([{ prompt, expect: s.expect, source: `test ${id}` }]);
      this.added = [...this.added, i];
      return true;
    } catch (err) {
      this.error = toUiError(err);
      return false;
    } finally {
      this.busy = false;
    }
  }
}
