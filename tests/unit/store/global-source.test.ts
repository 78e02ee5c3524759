// Where a global version came from (docs/store.md, "global_adapter_versions"), read from what is
// stored: the adapter an EMA step merged in is a lesson (adopted as one, or compiled from a
// lesson-<world> skill by a continual run's loop), a run (an adopted run's global adapter), or
// manual (the form, the API, a rollback, and everything from before adoptions).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdapterRecipe } from '../../../common/api/adapter-schemas';
import type { Adapter } from '../../../main/adapters/types';
import { encodeAdapter, sha256Hex } from '../../../main/store/adapter-tensors';
import { AdaptersRepo, type NewAdapter } from '../../../main/store/adapters-repo';
import { AdoptionsRepo } from '../../../main/store/adoptions-repo';
import { openDatabase, type Database } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { randomAdapter } from '../adapters/builders';
import { skillText } from './builders';

let db: Database;
let repo: AdaptersRepo;
let adoptions: AdoptionsRepo;
let bundle: number;
let seed = 0;

beforeEach(() => {
  db = openDatabase(':memory:');
  repo = new AdaptersRepo(db);
  adoptions = new AdoptionsRepo(db);
  bundle = repo.ensureBundle('a'.repeat(64), { id: 'tiny' }, '/bundles/tiny');
});
afterEach(() => db.close());

const importRecipe = (a: Adapter): AdapterRecipe => ({ kind: 'import', tensorsSha256: sha256Hex(encodeAdapter(a)) });
const imported = (over: Partial<NewAdapter> = {}) => {
  const adapter = randomAdapter({ seed: ++seed });
  return repo.insert({ bundleId: bundle, adapter, recipe: importRecipe(adapter), ...over }).adapter;
};
const skillVersion = (name: string) => {
  const { version } = new SkillsRepo(db).save(name, skillText(name, 'A rule'), 'A rule', { kind: 'manual' }, 'b1');
  return (db.prepare('SELECT id FROM skill_versions WHERE sha256 = ?').get(version.sha256) as { id: number }).id;
};
const adopted = (kind: 'lesson' | 'global') =>
  adoptions.adopt(
    {
      name: kind === 'lesson' ? 'tidy-commits' : 'global-abcdefabcdef',
      kind,
      source: { run: 'abcdefabcdef', mode: 'merge', seed: 1, episode: 1, adapterKey: 'c'.repeat(64), recipe: null },
    },
    () => {
      const sv = kind === 'lesson' ? skillVersion('tidy-commits') : null;
      return { adapterRowId: imported({ skillVersionId: sv }).rowId, skillVersionRowId: sv };
    },
  );
/** Merges the adapter with `key` into the global adapter as the next version. */
const merge = (key: string) => {
  const head = repo.globalHead(bundle);
  repo.appendEma(
    bundle,
    {
      bundleId: bundle,
      adapter: randomAdapter({ seed: ++seed, rank: 2 }),
      recipe: { kind: 'ema', beta: 0.5, rankBudget: 2, sources: [head?.adapterKey ?? null, key] },
    },
    head ? 0.5 : 1,
    head?.n ?? null,
  );
};
const sources = () =>
  repo
    .globalHistory(bundle)
    .reverse()
    .map((g) => g.source);

describe('global version source', () => {
  it('reads manual for a plain adapter, lesson for a lesson-<world> one or an adopted lesson, run for an adopted global', () => {
    merge(imported().key);
    merge(imported({ skillVersionId: skillVersion('lesson-tidy') }).key);
    const lesson = adopted('lesson');
    merge(repo.get(lesson.adapterRowId)!.key);
    const run = adopted('global');
    merge(repo.get(run.adapterRowId)!.key);
    repo.rollback(bundle, 1);
    expect(sources()).toEqual(['manual', 'lesson', 'lesson', 'run', 'manual']);
  });

  it('reads manual for a merged-in adapter no longer in the library', () => {
    merge('f'.repeat(64));
    expect(repo.globalHead(bundle)!.source).toBe('manual');
  });
});
