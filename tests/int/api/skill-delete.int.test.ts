// skills.delete over each transport against the real services and SQLite: the skill and all its
// versions go in one transaction, and the delete is refused (nothing removed) while an adapter
// compiled from one of its versions exists, naming the adapters.
import { beforeAll, describe, expect, it } from 'vitest';
import { HYPER_BUNDLE, SKILLS } from '../compile/fixture';
import { failure, studioSuite, transports } from './transports';

describe.each(transports)('skills.delete over $name', (transport) => {
  const suite = studioSuite(transport, 'pskills-delete-', { defaultBundleDir: HYPER_BUNDLE });
  beforeAll(async () => {
    for (const [name, content] of Object.entries(SKILLS)) await suite.api.skills.save({ name, content });
  });

  it('deletes a skill and every version of it; the name can then start again at version 1', async () => {
    await suite.api.skills.save({ name: 'sql-review', content: `${SKILLS['sql-review']}\nA second version.\n` });
    const before = (await suite.api.app.info({})).skills;
    expect(await suite.api.skills.delete({ name: 'sql-review' })).toEqual({ deleted: 'sql-review', versions: 2 });
    expect((await suite.api.app.info({})).skills).toBe(before - 1);
    expect((await suite.api.skills.list({})).map((s) => s.name)).not.toContain('sql-review');
    expect((await failure(suite.api.skills.get({ name: 'sql-review', version: 1 }))).code).toBe('not_found');
    const again = await suite.api.skills.save({ name: 'sql-review', content: SKILLS['sql-review'] });
    expect(again).toMatchObject({ created: true, version: { version: 1, parentVersion: null } });
  });

  it('is refused while an adapter compiled from the skill exists, naming it; nothing is removed', async () => {
    const compiled = await suite.api.adapters.compile({ name: 'review-branch' }).result;
    await suite.api.skills.save({ name: 'review-branch', content: `${SKILLS['review-branch']}\nVersion 2.\n` });
    const err = await failure(suite.api.skills.delete({ name: 'review-branch' }));
    expect(err.code).toBe('conflict');
    expect(err.message).toBe(
      `skill "review-branch" was not deleted: an adapter was compiled from it (${compiled.adapter.id} (v1)); delete it on the Adapters page first`,
    );
    expect(err.details).toEqual({ adapters: [{ id: compiled.adapter.id, version: 1 }] });
    const kept = await suite.api.skills.get({ name: 'review-branch' });
    expect(kept.history.map((v) => v.version)).toEqual([2, 1]);
    expect((await suite.api.adapters.list({})).map((a) => a.id)).toContain(compiled.adapter.id);

    // Once the adapter is gone, the skill can go.
    await suite.api.adapters.delete({ id: compiled.adapter.id });
    expect(await suite.api.skills.delete({ name: 'review-branch' })).toEqual({ deleted: 'review-branch', versions: 2 });
  });

  it('an unknown skill is not_found; a bad name never reaches the service', async () => {
    expect((await failure(suite.api.skills.delete({ name: 'no-such-skill' }))).code).toBe('not_found');
    expect((await failure(suite.api.skills.delete({ name: ' padded ' }))).code).toBe('invalid_input');
    expect((await failure(suite.api.skills.delete({ name: 'x', extra: 1 } as never))).code).toBe('invalid_input');
  });
});
