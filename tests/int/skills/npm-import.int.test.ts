// Imports real packages pinned in shared/data/skill-packages.txt through `npm pack` (network).
// Set PSKILLS_NPM_CACHE to keep the tarballs between runs; by default a temp dir is used and removed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StudioError } from '../../../common/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectImport } from '../../../main/skills/importer';
import { scanNpm } from '../../../main/skills/sources/npm';

let cacheDir: string;
const ownCache = !process.env.PSKILLS_NPM_CACHE;
beforeAll(async () => {
  cacheDir = process.env.PSKILLS_NPM_CACHE ?? (await mkdtemp(join(tmpdir(), 'pskills-npm-int-')));
});
afterAll(async () => {
  if (ownCache) await rm(cacheDir, { recursive: true, force: true });
});

const reasonsOf = (skipped: { reason: string }[]) => {
  const counts: Record<string, number> = {};
  for (const s of skipped) {
    const kind = s.reason.match(/^(not English|duplicate body|another skill named|same body)/)?.[1] ?? s.reason;
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
};

describe('npm import of real skill packages', () => {
  it('@plaited/development-skills@0.8.1: all 5 skills, with npm provenance', async () => {
    const { versions, skipped } = await collectImport('@plaited/development-skills@0.8.1', { cacheDir });
    // Observed: 5 SKILL.md under skills/, all English, distinct and described.
    expect(skipped).toEqual([]);
    expect(versions.map((v) => v.name)).toEqual([
      'code-documentation',
      'optimize-agents-md',
      'scaffold-rules',
      'typescript-lsp',
      'validate-skill',
    ]);
    expect(versions[0]?.package).toBe('@plaited/development-skills');
    expect(versions[0]?.provenance).toEqual({
      kind: 'npm',
      package: '@plaited/development-skills',
      version: '0.8.1',
      license: 'ISC',
      integrity: 'sha512-8bE+jHqk6XOtyypwAqtazJf7SI6oMSJZsRO9TUH/Vx0s3TBiJo7vlbz+pfmWzGVEvw/rCQ2ifVuEks4LOe7ZCA==',
      path: 'skills/code-documentation/SKILL.md',
    });
    for (const v of versions) expect(v.content.startsWith('---')).toBe(true);
  });

  it('@ant-design/x-skill@2.9.0: the 6 English skills kept, the 6 Chinese ones (skills-zh/) skipped', async () => {
    const { versions, skipped } = await collectImport('@ant-design/x-skill@2.9.0', { cacheDir });
    // Observed: 12 SKILL.md, skills/* in English and skills-zh/* their Chinese translations.
    expect(versions.map((v) => v.provenance.kind === 'npm' && v.provenance.path)).toEqual([
      'skills/use-x-chat/SKILL.md',
      'skills/x-card/SKILL.md',
      'skills/x-chat-provider/SKILL.md',
      'skills/x-components/SKILL.md',
      'skills/x-markdown/SKILL.md',
      'skills/x-request/SKILL.md',
    ]);
    expect(reasonsOf(skipped)).toEqual({ 'not English': 6 });
    expect(skipped.every((s) => s.path.startsWith('skills-zh/') && /non-Latin script, mostly Han/.test(s.reason))).toBe(
      true,
    );
    expect(versions[0]?.provenance).toMatchObject({
      package: '@ant-design/x-skill',
      version: '2.9.0',
      license: 'MIT',
      integrity: 'sha512-YKnJvF52xq/KLqrnhaWuv+XWaBIaLFuDXy0Z3I1AEXdtMZ6k7egsat9MhbWm/+XLja7dpPCxiIfUdgjuzPmClA==',
    });
  });

  it('cc-sdd@3.0.2: 136 templated copies collapse to 17 skills', async () => {
    const { versions, skipped } = await collectImport('cc-sdd@3.0.2', { cacheDir });
    // Observed: 17 kiro-* skills copied into 8 agent template folders (136 files). 90 copies share a
    // body with an earlier one; 29 are agent-specific variants of a name already taken.
    expect(versions).toHaveLength(17);
    expect(skipped).toHaveLength(119);
    expect(reasonsOf(skipped)).toEqual({ 'duplicate body': 90, 'another skill named': 29 });
    expect(new Set(versions.map((v) => v.name)).size).toBe(17);
    expect(versions.every((v) => v.name.startsWith('kiro-'))).toBe(true);
    expect(versions[0]?.provenance).toEqual({
      kind: 'npm',
      package: 'cc-sdd',
      version: '3.0.2',
      license: 'MIT',
      integrity: 'sha512-7r9hyUhY35aeKVoqhViad28/JTT5SdDH3pPhGccY8nFpmT25+EP6vywetUwVL8wUCi3deJQBg/YcFU2gNnhC6w==',
      path: 'templates/agents/antigravity-skills/skills/kiro-debug/SKILL.md',
    });
  });

  it('answers a second import of an exact version from the cache, and knows bodies it has seen', async () => {
    const first = await collectImport('@plaited/development-skills@0.8.1', { cacheDir });
    const offline = await scanNpm('@plaited/development-skills@0.8.1', {
      cacheDir,
      runNpm: () => Promise.reject(new Error('npm must not run on a cache hit')),
    });
    expect(offline.cached).toBe(true);
    const known = new Set(first.versions.map((v) => v.bodyHash));
    const again = await collectImport('@plaited/development-skills@0.8.1', {
      cacheDir,
      isKnownBody: (h) => known.has(h),
    });
    expect(again.versions).toEqual([]);
    expect(reasonsOf(again.skipped)).toEqual({ 'same body': 5 });
  });

  it("fails with npm's error for a package that does not exist", async () => {
    const err = (await collectImport('pskills-no-such-package-7f3a9c@1.0.0', { cacheDir }).catch(
      (e: unknown) => e,
    )) as StudioError;
    expect(err).toBeInstanceOf(StudioError);
    expect(err.code).toBe('import_failed');
    // The spec is named first; npm's own reason follows (E404 from the registry).
    expect(err.message).toMatch(/^npm pack pskills-no-such-package-7f3a9c@1\.0\.0 failed: /);
    expect(err.message).toMatch(/E404|Not Found/); // npm words it differently with CI=true
  });
});
