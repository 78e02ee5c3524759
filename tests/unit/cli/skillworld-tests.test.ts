// `pskills tests set <skill> --skillworld DIR`: a SkillWorld folder's practice questions for one skill
// become that skill version's tests (id, messages up to the answer, checker spec), valid as a TestSet;
// its scored tasks (tasks.jsonl) never do.
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
  it("takes the named skill's practice questions, tool turns included, never its scored tasks", () => {
    writeFileSync(
      join(dir, 'tasks.jsonl'),
      task('sw-test-s0-00000-0', 'brotro-mixtus', [{ role: 'user', content: 'Scored.' }], {
        kind: 'contains',
        value: 'z',
      }) + '\n',
    );
    writeFileSync(
      join(dir, 'practice.jsonl'),
      [
        task('sw-test-s0-00000-p0', 'brotro-mixtus', [{ role: 'user', content: 'Note meter 1057.' }], {
          kind: 'regex',
          pattern: '^VESSOR: *meter 1057\\.?$',
        }),
        task('sw-test-s0-00001-p0', 'other-skill', [{ role: 'user', content: 'q' }], { kind: 'contains', value: 'z' }),
        task(
          'sw-test-s0-00000-p1',
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
    expect(tests.map((t) => t.id)).toEqual(['sw-test-s0-00000-p0', 'sw-test-s0-00000-p1']);
    expect(tests.some((t) => t.messages![0]!.content === 'Scored.')).toBe(false);
    expect(tests[1]!.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(TestSet.safeParse(tests).success).toBe(true);
  });

  it('names a folder without practice.jsonl (tasks.jsonl alone is not enough), and a skill with none', () => {
    expect(() => skillworldTests(join(dir, 'nope'), 'x')).toThrow(/no practice\.jsonl/);
    writeFileSync(
      join(dir, 'tasks.jsonl'),
      task('t', 'a', [{ role: 'user', content: 'q' }], { kind: 'contains', value: 'z' }) + '\n',
    );
    expect(() => skillworldTests(dir, 'a')).toThrow(/no practice\.jsonl.*scoring only/);
    writeFileSync(
      join(dir, 'practice.jsonl'),
      task('p', 'a', [{ role: 'user', content: 'q' }], { kind: 'contains', value: 'z' }) + '\n',
    );
    expect(() => skillworldTests(dir, 'b')).toThrow(/has no practice question for skill "b"/);
  });
});
