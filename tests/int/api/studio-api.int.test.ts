// Every StudioApi method, round-tripped through each transport against the real services,
// a real SQLite file and real SKILL.md parsing.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioContract } from '../../../common/api/contract';
import { entries } from '../../../common/api/define';
import type { ImportProgress } from '../../../common/api/skill-schemas';
import { StudioError } from '../../../common/errors';
import { tgzBytes } from '../../fixtures/skills/tar-bytes';
import { failure, studioSuite, transports } from './transports';

const FIXTURE_BUNDLE = join(process.cwd(), 'tests', 'fixtures', 'bundle-tiny');
/** Namespaces whose own suite checks its coverage the same way: tests/int/adapters/adapters-api.int.test.ts,
 * tests/int/compile/compile-api.int.test.ts (compare), tests/int/trajectories/trajectories-api.int.test.ts
 * (trajectories, settings, verify); models (list, activate, create) run through the Models page's state in
 * tests/int/api/models.int.test.ts. */
const COVERED_ELSEWHERE = [
  'adapters',
  'ema',
  'compare',
  'trajectories',
  'settings',
  'verify',
  'continual',
  'evolve',
  'models',
];

const skillMd = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\nlicense: MIT\n---\n\n# ${name}\n\n## When to use\n\n${body}\n\n## Steps\n\n1. Read the input carefully.\n2. Apply the rule and check the result.\n`;

function makeFolder(): string {
  const root = mkdtempSync(join(tmpdir(), 'pskills-api-src-'));
  const write = (name: string, description: string, body: string, folder = name) => {
    mkdirSync(join(root, folder), { recursive: true });
    writeFileSync(join(root, folder, 'SKILL.md'), skillMd(name, description, body));
  };
  write(
    'release-notes',
    'Write release notes from a list of merged pull requests.',
    'Use this when a release is cut and the changelog needs a human summary of what changed.',
  );
  write(
    'sql-review',
    'Review SQL migrations for locking and data loss.',
    'Use this before applying a schema migration to a production database with live traffic.',
  );
  // The same body again under another folder: a duplicate the importer must skip.
  write(
    'sql-review',
    'Review SQL migrations for locking and data loss.',
    'Use this before applying a schema migration to a production database with live traffic.',
    'zz-sql-review-copy',
  );
  return root;
}

describe.each(transports)('StudioApi over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-api-data-');
  let src: string;
  const covered = new Set<string>();

  beforeAll(() => {
    src = makeFolder();
  });
  afterAll(() => {
    rmSync(src, { recursive: true, force: true });
    // Every method and stream of the contract was exercised by this suite or by the one that owns it.
    const mine = entries(studioContract)
      .map(([w]) => w)
      .filter((w) => !COVERED_ELSEWHERE.includes(w.split('.')[0]!))
      .filter((w) => w !== 'import.example'); // tests/e2e/first-run.spec.ts runs it on the real example set
    expect([...covered].sort()).toEqual(mine.sort());
  });

  it('import.run streams progress and returns the result', async () => {
    const events: ImportProgress[] = [];
    const res = await s.api.import.run({ source: src }, (e) => events.push(e)).result;
    covered.add('import.run');
    expect(res.imported).toBe(2);
    expect(res.skipped).toHaveLength(1);
    expect(res.skipped[0]!.reason).toMatch(/duplicate/i);
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1)).toMatchObject({ phase: 'done' });
    // Importing the same source again changes nothing and calls nothing a duplicate of itself.
    const again = await s.api.import.run({ source: src }).result;
    expect(again).toMatchObject({ imported: 0, unchanged: 2 });
    expect(again.skipped).toHaveLength(1);
  });

  it('import.upload keeps the .tgz under cache/uploads and imports it; refuses what is no gzip archive', async () => {
    const archive = tgzBytes([
      {
        path: 'package/package.json',
        body: JSON.stringify({ name: 'dropped-pack', version: '1.0.0', license: 'MIT' }),
      },
      {
        path: 'package/skills/dropped-skill/SKILL.md',
        body: skillMd(
          'dropped-skill',
          'Summarise a dropped archive.',
          'Use this when a package archive was dropped onto the studio window and needs a summary.',
        ),
      },
    ]);
    const events: ImportProgress[] = [];
    const res = await s.api.import.upload(
      { fileName: 'dropped-pack-1.0.0.tgz', data: archive.toString('base64') },
      (e) => events.push(e),
    ).result;
    covered.add('import.upload');
    expect(res).toMatchObject({ imported: 1, unchanged: 0 });
    expect(events.at(-1)).toMatchObject({ phase: 'done' });
    // The provenance names the kept file, so it must exist (and no .part file is left behind).
    expect(res.source.startsWith(join(s.dataDir, 'cache', 'uploads'))).toBe(true);
    expect(existsSync(res.source)).toBe(true);
    expect(readdirSync(join(s.dataDir, 'cache', 'uploads')).filter((f) => f.endsWith('.part'))).toEqual([]);
    const detail = await s.api.skills.get({ name: 'dropped-skill' });
    expect(JSON.stringify(detail)).toContain(res.source);

    const notGzip = await failure(
      s.api.import.upload({ fileName: 'notes.tgz', data: Buffer.from('plain text').toString('base64') }).result,
    );
    expect(notGzip.code).toBe('import_failed');
    expect(notGzip.message).toMatch(/notes\.tgz is not a gzip archive/);
    const badName = await failure(
      s.api.import.upload({ fileName: '../x.tgz', data: archive.toString('base64') }).result,
    );
    expect(badName.code).toBe('invalid_input');
    expect(badName.message).toMatch(/fileName/);
    await s.api.skills.delete({ name: 'dropped-skill' });
  });

  it('app.info counts the library', async () => {
    const info = await s.api.app.info({});
    covered.add('app.info');
    expect(info.skills).toBe(2);
    expect(info.dataDir).toBe(s.dataDir);
  });

  it('skills.list and skills.packages', async () => {
    const all = await s.api.skills.list({});
    const hit = await s.api.skills.list({ query: 'MIGRATION' });
    covered.add('skills.list');
    expect(all.map((s) => s.name).sort()).toEqual(['release-notes', 'sql-review']);
    expect(hit.map((s) => s.name)).toEqual(['sql-review']);
    const pk = await s.api.skills.packages({});
    covered.add('skills.packages');
    expect(pk).toEqual([]);
  });

  it('skills.get returns content, parse and provenance', async () => {
    const d = await s.api.skills.get({ name: 'sql-review' });
    covered.add('skills.get');
    expect(d.version.version).toBe(1);
    expect(d.version.provenance).toMatchObject({ kind: 'folder', path: 'sql-review/SKILL.md' });
    expect(d.parsed.sections.map((s) => s.heading)).toEqual(['sql-review']);
    expect(d.parsed.sections[0]!.children.map((s) => s.heading)).toEqual(['When to use', 'Steps']);
  });

  it('skills.validate reports line-numbered errors', async () => {
    const p = await s.api.skills.validate({ content: '---\nname: x\ndescription: [unclosed\n---\nbody\n' });
    covered.add('skills.validate');
    const err = p.diagnostics.find((d) => d.severity === 'error');
    expect(err?.line).toBeGreaterThanOrEqual(2);
    expect(err?.line).toBeLessThanOrEqual(4);
  });

  it('skills.save versions only changed content', async () => {
    const d = await s.api.skills.get({ name: 'release-notes' });
    const same = await s.api.skills.save({ name: 'release-notes', content: d.content });
    covered.add('skills.save');
    expect(same.created).toBe(false);
    expect(same.version.version).toBe(1);
    const changed = await s.api.skills.save({
      name: 'release-notes',
      content: d.content + '\n## Pitfalls\n\nDo not list internal refactors.\n',
    });
    expect(changed.created).toBe(true);
    expect(changed.version).toMatchObject({ version: 2, parentVersion: 1, provenance: { kind: 'manual' } });
    const v1 = await s.api.skills.get({ name: 'release-notes', version: 1 });
    expect(v1.content).toBe(d.content);
    expect((await s.api.skills.get({ name: 'release-notes' })).history.map((h) => h.version)).toEqual([2, 1]);
  });

  it('skills.create writes version 1 from the template (refusals: tests/int/api/skill-create.int.test.ts)', async () => {
    const d = await s.api.skills.create({ name: 'fresh-notes' });
    covered.add('skills.create');
    expect(d.version).toMatchObject({ version: 1, provenance: { kind: 'template' } });
    expect((await s.api.skills.get({ name: 'fresh-notes' })).content).toBe(d.content);
  });

  it('errors arrive as {code, message, details}', async () => {
    const missing = (await s.api.skills.get({ name: 'nope' }).catch((e: unknown) => e)) as StudioError;
    expect(missing).toBeInstanceOf(StudioError);
    expect(missing.code).toBe('not_found');
    const bad = (await s.api.skills
      .save({ name: 'broken', content: '---\nname: [\n---\n' })
      .catch((e: unknown) => e)) as StudioError;
    expect(bad.code).toBe('bad_skill');
    expect(bad.message).toMatch(/line \d+/);
    expect(bad.details).toBeTruthy();
    const malformed = (await s.api.skills
      .get({ name: 42 } as unknown as { name: string })
      .catch((e: unknown) => e)) as StudioError;
    expect(malformed.code).toBe('invalid_input');
    const failedImport = (await s.api.import
      .run({ source: join(src, 'does-not-exist') })
      .result.catch((e: unknown) => e)) as StudioError;
    expect(failedImport.code).toBe('import_failed');
    expect(failedImport.message).toContain('does-not-exist');
  });

  it('engine.info, engine.loadBundle and a streamed engine.generate', async () => {
    expect((await s.api.engine.info({})).loaded).toBe(false);
    covered.add('engine.info');
    const noDefault = (await s.api.engine.generate({ prompt: 'hi' }).result.catch((e: unknown) => e)) as StudioError;
    expect(noDefault.code).toBe('not_found');
    const info = await s.api.engine.loadBundle({ dir: FIXTURE_BUNDLE });
    covered.add('engine.loadBundle');
    expect(info).toMatchObject({ loaded: true, id: 'tiny-random', format: 'pskills.bundle/2' });
    expect((await s.api.engine.info({})).architecture?.layers).toBe(2);
    const deltas: string[] = [];
    const res = await s.api.engine.generate(
      { messages: [{ role: 'user', content: 'Name three steps.' }], maxTokens: 12, sampling: { temperature: 0 } },
      (e) => deltas.push(e.text),
    ).result;
    covered.add('engine.generate');
    expect(res.completionTokens).toBeGreaterThan(0);
    expect(deltas.join('')).toBe(res.text);
    expect(res.promptTokens).toBeGreaterThan(5);
    const missing = (await s.api.engine
      .loadBundle({ dir: join(src, 'no-bundle') })
      .catch((e: unknown) => e)) as StudioError;
    expect(missing.code).toBe('not_found');
    expect(missing.message).toContain('no-bundle');
    expect((await s.api.engine.info({})).id).toBe('tiny-random'); // still usable after the failed load
    const bad = (await s.api.engine
      .generate({ prompt: 'x', messages: [] } as never)
      .result.catch((e: unknown) => e)) as StudioError;
    expect(bad.code).toBe('invalid_input');
  });

  it('skills.delete removes a skill and its versions (refusals: tests/int/api/skill-delete.int.test.ts)', async () => {
    await s.api.skills.save({
      name: 'to-delete',
      content: skillMd('to-delete', 'A skill made to be deleted.', 'Use it when testing skills.delete.'),
    });
    expect(await s.api.skills.delete({ name: 'to-delete' })).toEqual({ deleted: 'to-delete', versions: 1 });
    covered.add('skills.delete');
    expect((await s.api.skills.get({ name: 'to-delete' }).catch((e: unknown) => e)) as StudioError).toMatchObject({
      code: 'not_found',
    });
  });

  it('cancelling an import writes nothing', async () => {
    const before = (await s.api.app.info({})).skills;
    const other = makeFolder();
    mkdirSync(join(other, 'fresh-skill'));
    writeFileSync(
      join(other, 'fresh-skill', 'SKILL.md'),
      skillMd('fresh-skill', 'A skill that only this import brings.', 'Use it when testing cancellation of an import.'),
    );
    const h = s.api.import.run({ source: other }, () => h.cancel());
    const err = (await h.result.catch((e: unknown) => e)) as StudioError;
    expect(err.code).toBe('cancelled');
    expect((await s.api.app.info({})).skills).toBe(before);
    rmSync(other, { recursive: true, force: true });
  });
});
