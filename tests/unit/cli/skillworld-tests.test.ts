// `pskills tests set <skill> --skillworld DIR`: a SkillWorld folder's tasks for one skill become that
// skill version's tests (task id, messages up to the answer, checker spec), valid as a TestSet.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestSet } from '../../../common/api/verify-schemas';
import { skillworldTests } from '../../../main/cli/verify';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-swtests-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const task = (id: string, skill: string, messages: object[], checker: object) =>
  JSON.stringify({
    task_id: id,
    skill,
    skill_path: `skills/${skill}/SKILL.md`,
    turns: messages.length > 1 ? 'multi' : 'single',
    messages,
    checker,
    reference: 'x',
  });

describe('skillworldTests', () => {
  it("takes the named skill's tasks, tool turns included, as tests the API accepts", () => {
    writeFileSync(
      join(dir, 'tasks.jsonl'),
      [
        task('sw-test-s0-00000-0', 'brotro-mixtus', [{ role: 'user', content: 'Note meter 1057.' }], {
          kind: 'regex',
          pattern: '^VESSOR: *meter 1057\\.?$',
        }),
        task('sw-test-s0-00001-0', 'other-skill', [{ role: 'user', content: 'q' }], { kind: 'contains', value: 'z' }),
        task(
          'sw-test-s0-00000-1',
          'brotro-mixtus',
          [
            { role: 'user', content: 'Look it up.' },
            { role: 'assistant', content: 'CALL find(id="7")' },
            { role: 'tool', content: 'found' },
          ],
          { kind: 'tool_call', name: 'file', args: { id: '7' } },
        ),
        '',
      ].join('\n'),
    );
    const tests = skillworldTests(dir, 'brotro-mixtus');
    expect(tests.map((t) => t.id)).toEqual(['sw-test-s0-00000-0', 'sw-test-s0-00000-1']);
    expect(tests[1]!.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(TestSet.safeParse(tests).success).toBe(true);
  });

  it('names a folder without tasks.jsonl, and a skill with no task', () => {
    expect(() => skillworldTests(join(dir, 'nope'), 'x')).toThrow(/not a SkillWorld folder/);
    writeFileSync(
      join(dir, 'tasks.jsonl'),
      task('t', 'a', [{ role: 'user', content: 'q' }], { kind: 'contains', value: 'z' }) + '\n',
    );
    expect(() => skillworldTests(dir, 'b')).toThrow(/has no task for skill "b"/);
  });
});
