// `__proto__` in frontmatter is an ordinary key: kept in `extra` and in
// `metadata` with its value, through the parser and through the API's schemas, and no object's
// prototype changes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { studioContract } from '../../../common/api/contract';
import { Frontmatter } from '../../../common/api/skill-schemas';
import { createStudio } from '../../../main/api/root';
import { memoryPair } from '../api/memory-pair';
import { parseSkillMd } from '../../../main/skills/parse';
import { skillMd } from '../../fixtures/skills/skill-md';

const CONTENT = skillMd({
  extra: '__proto__:\n  polluted: true\nconstructor: builder\nmetadata:\n  __proto__: {tier: 2}\n  owner: ana',
});

const own = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

describe('__proto__ in frontmatter', () => {
  it('is kept as a plain key in extra and in metadata', () => {
    const fm = parseSkillMd(CONTENT).frontmatter;
    expect(own(fm.extra, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(fm.extra, '__proto__')!.value).toEqual({ polluted: true });
    expect(Object.keys(fm.extra)).toEqual(['__proto__', 'constructor']);
    expect((fm.extra as { polluted?: unknown }).polluted).toBeUndefined(); // not inherited
    expect(Object.keys(fm.metadata!)).toEqual(['__proto__', 'owner']);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('survives the Frontmatter schema and a JSON round trip', () => {
    const fm = parseSkillMd(CONTENT).frontmatter;
    const back = Frontmatter.parse(JSON.parse(JSON.stringify(fm)));
    expect(Object.keys(back.extra)).toEqual(['__proto__', 'constructor']);
    expect(Object.getOwnPropertyDescriptor(back.extra, '__proto__')!.value).toEqual({ polluted: true });
    expect(Object.keys(back.metadata!)).toEqual(['__proto__', 'owner']);
  });

  it('comes back from skills.validate over a transport', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pskills-proto-'));
    const studio = createStudio({ dataDir });
    const { api, close } = memoryPair(studioContract, studio.dispatcher);
    try {
      const parsed = await api.skills.validate({ content: CONTENT });
      expect(Object.keys(parsed.frontmatter.extra)).toEqual(['__proto__', 'constructor']);
    } finally {
      close();
      await studio.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
