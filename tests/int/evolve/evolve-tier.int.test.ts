// Evolve recompiles with the tier the skill uses (docs/distill.md): when the version a run starts from
// has a distilled adapter on the loaded bundle, the best version is distilled with the same recipe and
// its adapter scored on the skill's tests; the tier, adapter and accuracy are stored with the run and
// read back. On the tiny train-step fixture (no hypernetwork: candidates scored in context).
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP_ROOT } from '../../../main/paths';
import { memory, studioSuite } from '../api/transports';

const TRAIN_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const skill = (name: string) =>
  `---\nname: ${name}\ndescription: Say ok.\n---\n\n# ${name}\n\n## Rule\n\nAlways answer ok.\n`;
const TESTS = [
  { id: 'a', prompt: 'hi', expect: { kind: 'contains' as const, value: 'zq-never-zq' } },
  { id: 'b', prompt: 'go', expect: { kind: 'not' as const, of: { kind: 'contains' as const, value: 'zq-never-zq' } } },
];

const s = studioSuite(memory, 'pskills-evolve-tier-', { defaultBundleDir: TRAIN_BUNDLE });

beforeAll(async () => {
  for (const name of ['uses-distilled', 'uses-instant']) {
    await s.api.skills.save({ name, content: skill(name) });
    await s.api.verify.setTests({ name, tests: TESTS });
  }
  await s.api.adapters.distill({ skill: { name: 'uses-distilled' }, steps: 2 }).result;
});

describe('evolve and the tier the skill uses', () => {
  it('a skill with a distilled adapter: the best version is distilled and scored; both numbers stored', async () => {
    const r = await s.api.evolve.run({
      name: 'uses-distilled',
      iterations: 1,
      candidates: 1,
      maxTokens: 4,
      modes: ['in_context'],
    }).result;
    expect(r.tier).toBe('distilled');
    expect(r.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(r.accuracy).toBe(0.5); // test a can never pass, test b always does
    expect(r.best.score).toBeGreaterThanOrEqual(0);
    const stored = await s.api.evolve.get({ run: r.run.id });
    expect(stored.bestCompiled).toEqual({ tier: 'distilled', adapter: r.adapter, accuracy: 0.5 });
    const adapter = await s.api.adapters.get({ id: r.adapter! });
    expect(adapter.recipe).toMatchObject({ kind: 'distill', steps: 2 });
    expect(adapter.skill).toMatchObject({ name: 'uses-distilled', version: r.best.version });
  });

  it('a skill without one stays instant (no hypernetwork here: no adapter, no accuracy)', async () => {
    const r = await s.api.evolve.run({
      name: 'uses-instant',
      iterations: 1,
      candidates: 1,
      maxTokens: 4,
      modes: ['in_context'],
    }).result;
    expect([r.tier, r.adapter, r.accuracy]).toEqual(['instant', null, null]);
    expect((await s.api.evolve.get({ run: r.run.id })).bestCompiled).toEqual({
      tier: 'instant',
      adapter: null,
      accuracy: null,
    });
  });
});
