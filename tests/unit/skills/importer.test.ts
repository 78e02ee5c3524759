import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ImportProgress } from '../../../common/api/skill-schemas';
import { collectImport } from '../../../main/skills/importer';
import { bodyHash } from '../../../main/skills/normalize';
import { ENGLISH_BODY, skillMd } from '../../fixtures/skills/skill-md';
import { tgzBytes } from '../../fixtures/skills/tar-bytes';

let tmp: string;
let root: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'pskills-import-'));
  root = join(tmp, 'skills');
  await mkdir(root);
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

async function put(rel: string, content: string) {
  await mkdir(join(root, rel, '..'), { recursive: true });
  await writeFile(join(root, rel), content);
}
const body = (topic: string) => ENGLISH_BODY.replace('pull request', topic);

describe('collectImport from a folder', () => {
  it('keeps good skills and says why each other one was left out', async () => {
    await put('a-good/SKILL.md', skillMd({ name: 'good', body: body('change') }));
    await put('b-unnamed/SKILL.md', skillMd({ name: null, body: body('patch') }));
    await put('c-broken/SKILL.md', '---\nname: broken\ndescription: Use when: never\n---\nbody\n');
    await put('d-undescribed/SKILL.md', skillMd({ name: 'undescribed', description: null, body: body('diff') }));
    await put(
      'e-closed/SKILL.md',
      skillMd({ name: 'closed', extra: 'license: Proprietary. All rights reserved.', body: body('commit') }),
    );
    await put(
      'f-chinese/SKILL.md',
      skillMd({
        name: 'chinese',
        body: '# 部署\n\n当用户要求把服务部署到生产环境时使用本技能。先确认所有测试都已通过，然后检查配置文件中的环境变量。\n',
      }),
    );
    await put(
      'g-copy/SKILL.md',
      skillMd({ name: 'copy', body: `${body('change').toUpperCase().replace(/\n/g, '\n\n')}` }),
    );
    await put('h-known/SKILL.md', skillMd({ name: 'known', body: body('branch') }));
    await put('i-samename/SKILL.md', skillMd({ name: 'good', body: body('release') }));
    const known = bodyHash(body('branch'));
    const { versions, skipped } = await collectImport(root, { cacheDir: tmp, isKnownBody: (h) => h === known });

    expect(versions.map((v) => v.name)).toEqual(['good', 'b-unnamed']);
    expect(versions[0]).toEqual({
      name: 'good',
      description: 'Review a pull request for correctness and tests.',
      content: skillMd({ name: 'good', body: body('change') }),
      bodyHash: bodyHash(body('change')),
      package: null,
      provenance: { kind: 'folder', root, path: 'a-good/SKILL.md' },
    });
    expect(skipped).toEqual([
      {
        path: 'c-broken/SKILL.md',
        reason: 'invalid SKILL.md at line 3: invalid YAML: Nested mappings are not allowed in compact mappings',
      },
      { path: 'd-undescribed/SKILL.md', reason: "no 'description' in the frontmatter" },
      {
        path: 'e-closed/SKILL.md',
        reason: 'skill licence forbids reuse (proprietary): "Proprietary. All rights reserved."',
      },
      {
        path: 'f-chinese/SKILL.md',
        reason: expect.stringMatching(/^not English: \d+% of the prose words are in a non-Latin script, mostly Han/),
      },
      { path: 'g-copy/SKILL.md', reason: 'duplicate body of a-good/SKILL.md in this import' },
      { path: 'h-known/SKILL.md', reason: 'same body as another skill already in the library' },
      { path: 'i-samename/SKILL.md', reason: "another skill named 'good' (a-good/SKILL.md) is already in this import" },
    ]);
  });

  it('reports scan and parse progress, with each skip', async () => {
    await put('one/SKILL.md', skillMd({ name: 'one' }));
    await put('two/SKILL.md', skillMd({ name: 'two' }));
    const events: ImportProgress[] = [];
    await collectImport(root, { cacheDir: tmp, onProgress: (p) => events.push(p) });
    const parse = events.filter((e) => e.phase === 'parse');
    expect(parse.map((e) => [e.done, e.total, e.path])).toEqual([
      [1, 2, 'one/SKILL.md'],
      [2, 2, 'two/SKILL.md'],
    ]);
    expect(parse[1]?.skipped).toEqual({
      path: 'two/SKILL.md',
      reason: 'duplicate body of one/SKILL.md in this import',
    });
    const scans = events.filter((e) => e.phase === 'scan');
    expect(scans.at(-1)).toEqual({ phase: 'scan', done: 3, total: 3 }); // root, one, two
  });

  it('stops with an AbortError and returns nothing when cancelled mid-way', async () => {
    await put('one/SKILL.md', skillMd({ name: 'one', body: body('change') }));
    await put('two/SKILL.md', skillMd({ name: 'two', body: body('patch') }));
    const controller = new AbortController();
    const run = collectImport(root, {
      cacheDir: tmp,
      signal: controller.signal,
      onProgress: (p) => p.phase === 'parse' && controller.abort(),
    });
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('collectImport source kinds', () => {
  it('reads a .tgz with tgz provenance', async () => {
    const file = join(tmp, 'pkg.tgz');
    await writeFile(
      file,
      tgzBytes([
        {
          path: 'package/package.json',
          body: JSON.stringify({ name: 'acme-skills', version: '2.0.0', license: 'ISC' }),
        },
        { path: 'package/skills/review-prs/SKILL.md', body: skillMd() },
      ]),
    );
    const { versions } = await collectImport(file, { cacheDir: tmp });
    expect(versions.map((v) => [v.name, v.package, v.provenance])).toEqual([
      [
        'review-prs',
        'acme-skills',
        {
          kind: 'tgz',
          file,
          package: 'acme-skills',
          version: '2.0.0',
          license: 'ISC',
          path: 'skills/review-prs/SKILL.md',
        },
      ],
    ]);
  });

  it('skips every skill of a package whose licence forbids reuse', async () => {
    const file = join(tmp, 'closed.tar.gz');
    await writeFile(
      file,
      tgzBytes([
        {
          path: 'package/package.json',
          body: JSON.stringify({ name: 'closed', version: '1.0.0', license: 'UNLICENSED' }),
        },
        { path: 'package/skills/review-prs/SKILL.md', body: skillMd() },
      ]),
    );
    const { versions, skipped } = await collectImport(file, { cacheDir: tmp });
    expect(versions).toEqual([]);
    expect(skipped[0]?.reason).toMatch(/^package licence forbids reuse \(UNLICENSED/);
  });

  it.each([
    ['./no/such/folder', /no\/such\/folder does not exist/],
    ['missing.tgz', /missing\.tgz does not exist/],
    ['some/thing', /some\/thing does not exist/],
    ['hello world', /not a folder, a \.tgz file or a valid npm package name/],
    ['   ', /no source given/],
    ['x@', /not a version, range or tag/],
  ])('fails with import_failed for %j', async (source, message) => {
    await expect(collectImport(source, { cacheDir: tmp })).rejects.toMatchObject({
      name: 'StudioError',
      code: 'import_failed',
      message: expect.stringMatching(message),
    });
  });

  it('refuses a file that is not an archive', async () => {
    const file = join(tmp, 'notes.txt');
    await writeFile(file, 'hi');
    await expect(collectImport(file, { cacheDir: tmp })).rejects.toMatchObject({
      code: 'import_failed',
      message: `${file} is a file but not a .tgz/.tar.gz archive`,
    });
  });
});
