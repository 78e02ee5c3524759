// The template summariser: SkillWorld demos → a lesson SKILL.md, deterministic, valid, and stating
// the rule the verified answers share; the suite's seeded episode plan.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkExpect } from '../../../common/verify/expect';
import { generalise, lessonName, templateLesson, type LessonTrajectory } from '../../../main/continual/summarise';
import { DEFAULT_SUITE_DIR, loadWorlds, planEpisodes } from '../../../main/continual/suite';
import { parseSkillMd } from '../../../main/skills/parse';

const single = (user: string, answer: string): LessonTrajectory => ({
  messages: [
    { role: 'user', content: user },
    { role: 'assistant', content: answer },
  ],
});
const tool = (user: string, call: string, value: string, answer: string): LessonTrajectory => ({
  messages: [
    { role: 'user', content: user },
    { role: 'assistant', content: call },
    { role: 'tool', content: JSON.stringify({ value }) },
    { role: 'assistant', content: answer },
  ],
});

const CODEWORD = [
  single('Did the brikmux desk get claim 6163?', 'dirla: claim 6163 is noted.'),
  single('Please acknowledge case 3172.', 'dirla: case 3172 is noted.'),
  single('Confirm that lot 12 has arrived.', 'dirla: lot 12 is noted.'),
];

describe('generalise', () => {
  it('replaces spans copied from the request with <item> and from a tool result with <value>', () => {
    const before = [
      { role: 'user' as const, content: 'Look up voucher 4841 in the puxgu system.' },
      { role: 'assistant' as const, content: 'CALL glokar(boxglur="voucher 4841")' },
      { role: 'tool' as const, content: '{"value": "indigo 149"}' },
    ];
    expect(generalise('snamtis: indigo 149', before)).toBe('snamtis: <value>');
    expect(generalise('CALL glokar(boxglur="voucher 4841")', before.slice(0, 1))).toBe('CALL glokar(boxglur="<item>")');
    expect(generalise('nothing copied here', before)).toBe('nothing copied here');
  });
});

describe('templateLesson', () => {
  it('is a valid SKILL.md named lesson-<world> that states the shared form with its count', () => {
    const text = templateLesson({ world: 'brikmux-pexsur', episode: 2, trajectories: CODEWORD });
    const parsed = parseSkillMd(text);
    expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(parsed.frontmatter.name).toBe(lessonName('brikmux-pexsur'));
    expect(parsed.frontmatter.description).toMatch(/3 verified answers \(episode 2\)/);
    expect(text).toContain('- When asked, reply `dirla: <item> is noted.` (3 of 3 replies)');
    expect(text).toContain('"Did the brikmux desk get claim 6163?" → `dirla: claim 6163 is noted.`');
  });

  it('gives the same bytes for the same trajectories and differs when they differ', () => {
    const a = templateLesson({ world: 'w', episode: 1, trajectories: CODEWORD });
    expect(templateLesson({ world: 'w', episode: 1, trajectories: CODEWORD })).toBe(a);
    expect(templateLesson({ world: 'w', episode: 1, trajectories: CODEWORD.slice(0, 2) })).not.toBe(a);
  });

  it('states the tool call and the report after the tool result as separate rules', () => {
    const text = templateLesson({
      world: 'puxgu-snokfin',
      episode: 1,
      trajectories: [
        single('Can you fetch voucher 4841?', 'CALL zriplam(zexmal="voucher 4841")'),
        tool('Fetch claim 7?', 'CALL zriplam(zexmal="claim 7")', 'jade 548', 'gandel: jade 548'),
      ],
    });
    expect(text).toContain('- When asked, reply `CALL zriplam(zexmal="<item>")` (2 of 3 replies)');
    expect(text).toContain('- After a tool result, reply `gandel: <value>` (1 of 3 replies)');
  });

  it('names words the requests repeat that no answer uses, and keeps at most three examples', () => {
    const trajectories = [3, 4, 5, 6].map((n) =>
      single(`Confirm lot ${n} is a trinral, using the word trinral.`, `lot ${n} is a skemgem.`),
    );
    const text = templateLesson({ world: 'w', episode: 1, trajectories });
    expect(text).toMatch(/## Avoid\n\n- Words the requests used and no accepted answer did: .*trinral/);
    expect(text).not.toMatch(/did: .*skemgem/);
    expect(text.match(/^- ".*" → /gm)).toHaveLength(3);
  });

  it('puts a multi-line answer in a fenced block and stays a valid SKILL.md', () => {
    const text = templateLesson({
      world: 'w',
      episode: 1,
      trajectories: [single('List meter 1 and meter 2.', 'gakti> meter 1\ngakti> meter 2')],
    });
    expect(text).toContain('```text\n  gakti> <item>\n  gakti> <item>\n  ```');
    expect(parseSkillMd(text).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('writes a valid lesson for every world of the committed suite (references as answers)', () => {
    for (const w of loadWorlds(DEFAULT_SUITE_DIR)) {
      const text = templateLesson({
        world: w.name,
        episode: 1,
        trajectories: w.tasks.slice(0, 4).map((t) => ({
          messages: [...t.messages, { role: 'assistant' as const, content: t.reference }],
        })),
      });
      const parsed = parseSkillMd(text);
      expect(
        parsed.diagnostics.filter((d) => d.severity === 'error'),
        w.name,
      ).toEqual([]);
      expect(text).toContain('## Rules\n\n- ');
    }
  });
});

describe('the continual suite', () => {
  const worlds = loadWorlds(DEFAULT_SUITE_DIR);

  it('has 32 worlds of 8 tasks, each reference passing its checker and not the first task of the next world', () => {
    expect(worlds).toHaveLength(32);
    for (const [i, w] of worlds.entries()) {
      expect(w.tasks).toHaveLength(8);
      const other = worlds[(i + 1) % worlds.length]!.tasks[0]!;
      for (const t of w.tasks) {
        expect(checkExpect(t.checker, t.reference).passed, t.id).toBe(true);
        expect(checkExpect(other.checker, t.reference).passed, t.id).toBe(false);
      }
    }
  });

  it('plans the same episodes for a seed, another order for another seed, demos disjoint from held-out', () => {
    const opts = { episodes: 32, demos: 4, heldOut: 4 };
    const a = planEpisodes(worlds, { ...opts, seed: 0 });
    expect(planEpisodes(worlds, { ...opts, seed: 0 })).toEqual(a);
    const b = planEpisodes(worlds, { ...opts, seed: 1 });
    expect(b.map((e) => e.world.name)).not.toEqual(a.map((e) => e.world.name));
    expect(new Set(a.map((e) => e.world.name)).size).toBe(32);
    for (const e of a) {
      const demo = new Set(e.demos.map((t) => t.id));
      expect(e.heldOut.some((t) => demo.has(t.id))).toBe(false);
    }
  });

  it('refuses more episodes than worlds, or more tasks than a world has, naming the numbers', () => {
    expect(() => planEpisodes(worlds, { episodes: 33, seed: 0, demos: 1, heldOut: 1 })).toThrow(
      /33 asked, the suite has 32 worlds/,
    );
    expect(() => planEpisodes(worlds, { episodes: 1, seed: 0, demos: 5, heldOut: 4 })).toThrow(/has 8 tasks/);
  });

  it('names the file and line of a bad task', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pskills-suite-'));
    try {
      writeFileSync(
        join(dir, 'tasks.jsonl'),
        '{"skill":"a","task_id":"t","reference":"r","messages":[{"role":"user","content":"q"}],"checker":{"kind":"exact","value":"r"}}\n{"skill":"a","task_id":"u","reference":"r","messages":[],"checker":{"kind":"exact","value":"r"}}\n',
      );
      expect(() => loadWorlds(dir)).toThrow(/tasks\.jsonl: line 2: "messages"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
