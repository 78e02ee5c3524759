// Compare on a bundle without a hypernetwork (a GGUF import is one; here the tiny train-step fixture):
// the Instant and Wrong skill columns need instant adapters that cannot be made, so compare.run skips
// them with the reason and runs No skill and In context, and Distilled once the version has one.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP_ROOT } from '../../../main/paths';
import { memory, studioSuite } from '../api/transports';

const TRAIN_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const skill = (name: string) =>
  `---\nname: ${name}\ndescription: Says ${name}.\n---\n# ${name}\n\nAlways answer "${name}".\n`;

describe('compare on a bundle without a hypernetwork', () => {
  const suite = studioSuite(memory, 'pskills-compare-nohyper-', { defaultBundleDir: TRAIN_BUNDLE });

  beforeAll(async () => {
    await suite.api.skills.save({ name: 'greet', content: skill('greet') });
    await suite.api.skills.save({ name: 'other', content: skill('other') });
  });

  it('runs None and In context, and skips Instant and Wrong skill with the reason', async () => {
    const r = await suite.api.compare.run({ name: 'greet', prompt: 'hi', maxTokens: 2 }).result;
    expect(r.columns.map((c) => c.condition)).toEqual(['none', 'in_context']);
    expect(r.skipped.map((s) => s.condition)).toEqual(['instant', 'wrong_skill']);
    for (const s of r.skipped) expect(s.reason).toMatch(/has no hypernetwork, .*compile by distillation/);
    expect((await suite.api.adapters.list({})).length).toBe(0);
  }, 60_000);

  it('once the skill is distilled, the default columns are None, In context and Distilled', async () => {
    const d = await suite.api.adapters.distill({
      skill: { name: 'greet' },
      steps: 2,
      questions: [{ question: 'hi', source: 'user' }],
    }).result;
    const r = await suite.api.compare.run({ name: 'greet', prompt: 'hi', maxTokens: 2 }).result;
    expect(r.columns.map((c) => [c.condition, c.adapter])).toEqual([
      ['none', null],
      ['in_context', null],
      ['distilled', d.adapter.id],
    ]);
    expect(r.skipped.map((s) => s.condition)).toEqual(['instant', 'wrong_skill']);
  }, 120_000);
});
