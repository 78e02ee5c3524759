// adapters.compile and compare.run round-tripped through the in-memory transport and the web host,
// against the real services, a SQLite file and the bundle-hyper fixture (random hypernetwork).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompileProgress } from '../../../common/api/adapter-schemas';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { entries } from '../../../common/api/define';
import type { CompareEvent } from '../../../common/api/engine-schemas';
import { failure, memory, studioSuite, transports, withStudio } from '../api/transports';
import { HYPER_BUNDLE, SKILLS, TINY_BUNDLE } from './fixture';

/** The methods this suite covers (the other suites leave them out of their coverage checks). */
export const COMPILE_METHODS = ['adapters.compile', 'compare.run'];

describe.each(transports)('compile and compare over $name', (transport) => {
  const covered = new Set<string>();

  const s = studioSuite(transport, 'pskills-compile-api-', { defaultBundleDir: HYPER_BUNDLE });

  beforeAll(async () => {
    for (const [name, content] of Object.entries(SKILLS)) await s.api.skills.save({ name, content });
  });
  afterAll(async () => {
    const mine = entries(studioContract)
      .map(([w]) => w)
      .filter((w) => COMPILE_METHODS.includes(w));
    expect([...covered].sort()).toEqual(mine.sort());
  });

  it('adapters.compile streams chunk progress and stores the adapter; the same input returns the same adapter and bytes', async () => {
    const events: CompileProgress[] = [];
    const first = await s.api.adapters.compile({ name: 'review-branch' }, (e) => events.push(e)).result;
    covered.add('adapters.compile');
    expect(first).toMatchObject({
      cached: false,
      skill: { name: 'review-branch', version: 1 },
      adapter: {
        recipe: { kind: 'instant', hypernet: 'perceiver', combine: 'mean' },
        skill: { name: 'review-branch', version: 1 },
        bundle: { id: 'tiny-random-hyper' },
      },
    });
    expect(first.chunks).toBeGreaterThan(1);
    expect(first.rank).toBe(first.chunks * 2);
    expect(events.map((e) => e.chunk)).toEqual(Array.from({ length: first.chunks + 1 }, (_, i) => i));
    expect(events.every((e) => e.chunks === first.chunks && e.tokens === first.tokens)).toBe(true);

    const again = await s.api.adapters.compile({ name: 'review-branch', version: 1 }).result;
    expect(again.cached).toBe(true);
    expect(again.adapter).toEqual(first.adapter); // same id, key and tensor sha256
    expect(again.chunks).toBe(first.chunks);
    const list = await s.api.adapters.list({});
    expect(list.filter((a) => a.recipe.kind === 'instant')).toHaveLength(1);
    const detail = await s.api.adapters.get({ id: first.adapter.id });
    expect(detail.stats.norms.overall).toBeGreaterThan(0);
  });

  it('a new skill version compiles to a new adapter', async () => {
    const v2 = await s.api.skills.save({ name: 'review-branch', content: SKILLS['review-branch'] + '\n3. Merge.\n' });
    expect(v2.version.version).toBe(2);
    const r = await s.api.adapters.compile({ name: 'review-branch' }).result;
    expect(r).toMatchObject({ cached: false, skill: { name: 'review-branch', version: 2 } });
    const v1 = await s.api.adapters.compile({ name: 'review-branch', version: 1 }).result;
    expect(v1.cached).toBe(true);
    expect(v1.adapter.id).not.toBe(r.adapter.id);
  });

  it('cancelling a compile leaves no adapter row', async () => {
    const handle = s.api.adapters.compile({ name: 'long-notes' }, (e) => e.chunk === 1 && handle.cancel());
    const err = await failure(handle.result);
    expect(err.code).toBe('cancelled');
    const rows = await s.api.adapters.list({});
    expect(rows.some((a) => a.skill?.name === 'long-notes')).toBe(false);
  });

  it('errors name the skill, and the bundle without a hypernetwork', async () => {
    expect(await failure(s.api.adapters.compile({ name: 'nope' }).result)).toMatchObject({
      code: 'not_found',
      message: 'no skill "nope"',
    });
    expect(await failure(s.api.adapters.compile({ name: 'sql-review', version: 7 }).result)).toMatchObject({
      code: 'not_found',
      message: 'no skill "sql-review@7"',
    });
    await s.api.engine.loadBundle({ dir: TINY_BUNDLE });
    try {
      const err = await failure(s.api.adapters.compile({ name: 'sql-review' }).result);
      expect(err.code).toBe('invalid_input');
      expect(err.message).toMatch(
        /^bundle tiny-random \(.*bundle-tiny\) has no hypernetwork \(bundle\.json "hypernet" is null\)/,
      );
    } finally {
      await s.api.engine.loadBundle({ dir: HYPER_BUNDLE });
    }
  });

  it('compare.run streams four columns from one batch', async () => {
    const events: CompareEvent[] = [];
    const r = await s.api.compare.run(
      { name: 'sql-review', prompt: 'How do I review a migration?', maxTokens: 12 },
      (e) => events.push(e),
    ).result;
    covered.add('compare.run');
    expect(r.columns.map((c) => c.condition)).toEqual(['none', 'in_context', 'instant', 'wrong_skill']);
    expect(r.skill).toEqual({ name: 'sql-review', version: 1 });
    expect(r.wrongSkill).toEqual({ name: 'long-notes', version: 1 }); // pickWrongSkill: no word in common with sql-review (review-branch shares "review")
    expect(r.skipped).toEqual([]);
    const [none, inContext, instant, wrong] = r.columns;
    expect(inContext!.promptTokens).toBeGreaterThan(none!.promptTokens);
    expect(instant!.promptTokens).toBe(none!.promptTokens);
    expect(instant!.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(wrong!.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(wrong!.adapter).not.toBe(instant!.adapter);
    expect(wrong!.skill).toEqual({ name: 'long-notes', version: 1 });
    expect(instant!.text).not.toBe(none!.text);
    for (const c of r.columns) {
      expect(c.completionTokens).toBeGreaterThan(0);
      expect(c.ttftMs).toBeGreaterThan(0);
      expect(c.tokensPerSecond).toBeGreaterThanOrEqual(0);
    }
    // events: compile progress (both adapters are new), one start, then every token of every column
    const starts = events.filter((e) => e.type === 'start');
    expect(starts).toHaveLength(1);
    expect(events.findIndex((e) => e.type === 'start')).toBeGreaterThan(
      events.findLastIndex((e) => e.type === 'compile'),
    );
    expect(
      new Set(events.filter((e) => e.type === 'compile').map((e) => (e.type === 'compile' ? e.skill.name : ''))),
    ).toEqual(new Set(['sql-review', 'long-notes']));
    r.columns.forEach((c, i) => {
      const tokens = events.filter((e) => e.type === 'token' && e.column === i);
      expect(tokens).toHaveLength(c.completionTokens);
      expect(tokens.map((e) => (e.type === 'token' ? e.text : '')).join('')).toBe(c.text);
    });
    // greedy and batched rows are deterministic: the same call gives the same columns (adapters now
    // cached); asked by the condition's old name, `parametric`, it answers as `instant`
    const again = await s.api.compare.run({
      name: 'sql-review',
      prompt: 'How do I review a migration?',
      maxTokens: 12,
      conditions: ['parametric', 'none'],
    }).result;
    expect(again.columns.map((c) => c.condition)).toEqual(['instant', 'none']);
    expect(again.columns.map((c) => c.text)).toEqual([instant!.text, none!.text]);
    expect(again.wrongSkill).toBeNull();
  });

  it('compare.run: wrongSkill override, truncation to fit and bad input', async () => {
    const r = await s.api.compare.run({
      name: 'long-notes',
      prompt: 'Write the notes.',
      maxTokens: 200,
      conditions: ['in_context'],
    }).result;
    expect(r.columns[0]!.truncated).toBe(true);
    expect(r.columns[0]!.promptTokens).toBeLessThanOrEqual(256 - 200);
    const w = await s.api.compare.run({
      name: 'sql-review',
      prompt: 'x',
      maxTokens: 2,
      conditions: ['wrong_skill'],
      wrongSkill: 'review-branch',
    }).result;
    expect(w.wrongSkill).toEqual({ name: 'review-branch', version: 2 });
    expect(
      await failure(s.api.compare.run({ name: 'sql-review', prompt: 'x', wrongSkill: 'sql-review' }).result),
    ).toMatchObject({ code: 'invalid_input' });
    expect(await failure(s.api.compare.run({ name: 'nope', prompt: 'x' }).result)).toMatchObject({ code: 'not_found' });
    expect(
      await failure(s.api.compare.run({ name: 'sql-review', prompt: 'x', conditions: ['none', 'none'] }).result),
    ).toMatchObject({ code: 'invalid_input' });
  });
});

describe('compile is deterministic', () => {
  it('two libraries compile the same skill version to the same key and tensor bytes', async () => {
    const compile = async ({ api }: { api: StudioApi }) => {
      await api.skills.save({ name: 'sql-review', content: SKILLS['sql-review'] });
      return (await api.adapters.compile({ name: 'sql-review' }).result).adapter;
    };
    const out = [];
    for (let i = 0; i < 2; i++) out.push(await withStudio(compile, { defaultBundleDir: HYPER_BUNDLE }));
    expect(out[1]!.key).toBe(out[0]!.key);
    expect(out[1]!.tensorsSha256).toBe(out[0]!.tensorsSha256);
  });
});

describe('compare in a library of one skill', () => {
  const one = studioSuite(memory, 'pskills-compare-one-', { defaultBundleDir: HYPER_BUNDLE });

  it('skips wrong_skill and says why', async () => {
    await one.api.skills.save({ name: 'sql-review', content: SKILLS['sql-review'] });
    const r = await one.api.compare.run({
      name: 'sql-review',
      prompt: 'x',
      maxTokens: 2,
      conditions: ['none', 'wrong_skill'],
    }).result;
    expect(r.columns.map((c) => c.condition)).toEqual(['none']);
    expect(r.wrongSkill).toBeNull();
    expect(r.skipped).toEqual([
      { condition: 'wrong_skill', reason: 'the library has no skill other than "sql-review"' },
    ]);
    const none = await one.api.compare.run({ name: 'sql-review', prompt: 'x', conditions: ['wrong_skill'] }).result;
    expect(none.columns).toEqual([]);
  });
});

describe('compile without a default bundle', () => {
  const missing = join(tmpdir(), `pskills-compile-nobundle-${process.pid}`, 'resources', 'bundles', 'default');
  const s = studioSuite(memory, 'pskills-compile-nobundle-', { defaultBundleDir: missing });

  it('says where the default bundle should be', async () => {
    await s.api.skills.save({ name: 'sql-review', content: SKILLS['sql-review'] });
    const err = await failure(s.api.adapters.compile({ name: 'sql-review' }).result);
    expect(err.code).toBe('not_found');
    expect(err.message).toContain(`no default bundle at ${missing}`);
  });
});
