// `pskills skills export`: every stored version with its text and provenance, the input of the
// training corpus (training/…/data/studio_skills.py reads the --jsonl lines).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { exportSkills, type ExportedSkill } from '../../../main/cli/skills-export';
import { bodyHash } from '../../../main/skills/normalize';
import { parseSkillMd } from '../../../main/skills/parse';
import { ENGLISH_BODY, skillMd } from '../../fixtures/skills/skill-md';
import { tgzBytes } from '../../fixtures/skills/tar-bytes';
import { direct, studioSuite } from '../api/transports';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const ONE = skillMd({ name: 'one', extra: 'license: Apache-2.0' }).replace(/\n/g, '\r\n'); // stored as the file has it
const TWO = skillMd({ name: 'two', body: ENGLISH_BODY.replace('pull request', 'merge request') });
const ONE_EDITED = `${skillMd({ name: 'one', extra: 'license: Apache-2.0' })}\nOne more line.\n`;
const s = studioSuite(direct, 'pskills-export-');
let inProcess: ExportedSkill[];
let pkgOnly: ExportedSkill[];

const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', s.dataDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

beforeAll(async () => {
  const tgz = join(s.dataDir, 'pkg-a-2.0.0.tgz');
  writeFileSync(
    tgz,
    tgzBytes([
      { path: 'package/package.json', body: JSON.stringify({ name: 'pkg-a', version: '2.0.0', license: 'MIT' }) },
      { path: 'package/skills/one/SKILL.md', body: ONE },
      { path: 'package/skills/two/SKILL.md', body: TWO },
    ]),
  );
  const result = await s.api.import.run({ source: tgz }, () => undefined).result;
  expect(result.imported).toBe(2);
  await s.api.skills.save({ name: 'one', content: ONE_EDITED }); // version 2, saved by hand
  inProcess = await exportSkills(s.api);
  pkgOnly = await exportSkills(s.api, 'pkg-a');
  await s.close(); // the CLI has the library to itself
});

describe('pskills skills export', () => {
  it('lists every version, oldest first, with the text and where it came from', () => {
    expect(
      inProcess.map((r) => [r.name, r.version, r.package, r.packageVersion, r.path, r.license, r.provenance.kind]),
    ).toEqual([
      ['one', 1, 'pkg-a', '2.0.0', 'skills/one/SKILL.md', 'Apache-2.0', 'tgz'],
      ['one', 2, null, null, null, 'Apache-2.0', 'manual'],
      ['two', 1, 'pkg-a', '2.0.0', 'skills/two/SKILL.md', 'MIT', 'tgz'], // no licence of its own: the package's
    ]);
    expect(inProcess.map((r) => r.content)).toEqual([ONE, ONE_EDITED, TWO]);
    for (const r of inProcess) {
      expect(r.bodyHash).toBe(bodyHash(parseSkillMd(r.content)));
      expect(r.description).toBe('Review a pull request for correctness and tests.');
    }
    expect(pkgOnly.map((r) => `${r.name}@${r.version}`)).toEqual(['one@1', 'two@1']);
  });

  it('--jsonl prints one object a line, --json one array: the same rows', () => {
    const lines = pskills('skills', 'export', '--jsonl');
    expect(lines.code, lines.err).toBe(0);
    const rows = lines.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as ExportedSkill);
    expect(rows).toEqual(JSON.parse(JSON.stringify(inProcess)));
    const array = pskills('skills', 'export', '--json', '--package', 'pkg-a');
    expect(JSON.parse(array.out)).toEqual(JSON.parse(JSON.stringify(pkgOnly)));
    const text = pskills('skills', 'export');
    expect(text.out.split('\n')[0]).toBe('one\tv1\tpkg-a@2.0.0\tskills/one/SKILL.md');
  });

  it('refuses --json with --jsonl, and positionals', () => {
    for (const args of [['--json', '--jsonl'], ['one']]) {
      const r = pskills('skills', 'export', ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(/^pskills: usage: pskills skills export/);
    }
  });
});
