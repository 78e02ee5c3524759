// engine.generate with an adapter chosen in the request (the Playground's adapter picker), over each
// transport against the real services and the bundle-hyper fixture: a library adapter by id, a skill
// version (compiled on first use, then found), the global adapter, and the refusals: an adapter of
// another bundle, an unknown id, no global adapter yet, a malformed choice.
import { beforeAll, describe, expect, it } from 'vitest';
import type { GenerateInput } from '../../../common/api/engine-schemas';
import { HYPER_BUNDLE, SKILLS, TINY_BUNDLE } from '../compile/fixture';
import { failure, studioSuite, transports } from './transports';

const ask = (adapter?: GenerateInput['adapter']): GenerateInput => ({
  messages: [{ role: 'user', content: 'Name the first step.' }],
  maxTokens: 12,
  sampling: { temperature: 0 },
  ...(adapter ? { adapter } : {}),
});

describe.each(transports)('engine.generate with an adapter over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-gen-adapter-', { defaultBundleDir: HYPER_BUNDLE });
  beforeAll(async () => {
    for (const [name, content] of Object.entries(SKILLS)) await s.api.skills.save({ name, content });
  });

  it('runs with a library adapter, and with the same skill version chosen by name: same adapter, same text', async () => {
    const base = await s.api.engine.generate(ask()).result;
    expect(base.adapter ?? null).toBeNull();
    const compiled = await s.api.adapters.compile({ name: 'review-branch' }).result;
    const byId = await s.api.engine.generate(ask({ kind: 'library', id: compiled.adapter.id })).result;
    expect(byId.adapter).toBe(compiled.adapter.id);
    expect(byId.text).not.toBe(base.text); // the adapter changes the answer
    const bySkill = await s.api.engine.generate(ask({ kind: 'skill', name: 'review-branch', version: 1 })).result;
    expect(bySkill).toMatchObject({ adapter: compiled.adapter.id, text: byId.text });
  });

  it('a skill version not compiled yet is compiled on first use and kept in the library', async () => {
    const before = (await s.api.adapters.list({})).filter((a) => a.skill?.name === 'sql-review');
    expect(before).toEqual([]);
    const r = await s.api.engine.generate(ask({ kind: 'skill', name: 'sql-review' })).result;
    const after = (await s.api.adapters.list({})).filter((a) => a.skill?.name === 'sql-review');
    expect(after.map((a) => a.id)).toEqual([r.adapter]);
    expect(r.completionTokens).toBeGreaterThan(0);
  });

  it('global: refused until the bundle has one, then runs with its newest version', async () => {
    const none = await failure(s.api.engine.generate(ask({ kind: 'global' })).result);
    expect(none.code).toBe('not_found');
    expect(none.message).toBe('bundle tiny-random-hyper has no global adapter yet (ema.update makes version 1)');
    const source = (await s.api.adapters.list({})).find((a) => a.skill?.name === 'review-branch')!;
    const { version } = await s.api.ema.update({ adapterId: source.id });
    const r = await s.api.engine.generate(ask({ kind: 'global' })).result;
    expect(r.adapter).toBe(version.adapter);
  });

  it('refuses an unknown adapter, a malformed choice, and an adapter of another bundle (naming both)', async () => {
    expect((await failure(s.api.engine.generate(ask({ kind: 'library', id: 'abcdef' })).result)).code).toBe(
      'not_found',
    );
    expect((await failure(s.api.engine.generate(ask({ kind: 'skill' } as never)).result)).code).toBe('invalid_input');
    expect((await failure(s.api.engine.generate(ask({ kind: 'library', id: 'XYZ' } as never)).result)).code).toBe(
      'invalid_input',
    );
    expect((await failure(s.api.engine.generate(ask({ kind: 'skill', name: 'no-such-skill' })).result)).code).toBe(
      'not_found',
    );
    const hyperAdapter = (await s.api.adapters.list({})).find((a) => a.skill?.name === 'review-branch')!;
    await s.api.engine.loadBundle({ dir: TINY_BUNDLE });
    try {
      const err = await failure(s.api.engine.generate(ask({ kind: 'library', id: hyperAdapter.id })).result);
      expect(err.code).toBe('invalid_input');
      expect(err.message).toMatch(
        new RegExp(
          `^adapter ${hyperAdapter.id} was made for bundle tiny-random-hyper \\([0-9a-f]{12}\\), not the loaded bundle tiny-random \\([0-9a-f]{12}\\); load that bundle first$`,
        ),
      );
    } finally {
      await s.api.engine.loadBundle({ dir: HYPER_BUNDLE });
    }
  });
});
