// A large library for the render-time check (1,000 skills and 1,000 adapters): written
// straight into a data folder's studio.db through the store's own repositories, before the web host
// opens it. Seeded, so every run builds the same library. Adapters are rank 1 on two targets of the
// tiny fixture bundle (about 1 KB each, kept inline in SQLite), so the whole folder stays small.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdapterRecipe } from '../../common/api/adapter-schemas';
import type { Adapter, LoraPair, TargetKey } from '../../main/adapters/types';
import { bodyHash } from '../../main/skills/normalize';
import { sha256Hex } from '../../main/store/adapter-tensors';
import { AdaptersRepo, type StoredAdapter } from '../../main/store/adapters-repo';
import { openDatabase } from '../../main/store/db';
import { SkillsRepo } from '../../main/store/skills-repo';
import type { NewVersion } from '../../main/store/types';
import { ROOT } from './harness';

export const SCALE_BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');

export interface ScaleCounts {
  skills: number;
  adapters: number;
}

export interface ScaleLibrary extends ScaleCounts {
  versions: number;
  /** of every skill version's SKILL.md text */
  skillBytes: number;
  /** of every adapter's stored tensors */
  adapterBytes: number;
}

/** mulberry32: small, seeded, the same sequence everywhere. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOPICS = ['pdf', 'invoice', 'release', 'schema', 'incident', 'review', 'ticket', 'report', 'dataset', 'deploy'];
const ACTIONS = ['summarise', 'validate', 'draft', 'triage', 'convert', 'audit', 'merge', 'label', 'plan', 'check'];
const PACKAGES = ['@acme/office-skills', '@acme/dev-skills', 'ops-skills', 'writing-skills', 'data-skills'];
const STEPS = [
  'Read the whole input once before changing anything, and note what the user asked for.',
  'List the fields the result must contain and check each one against the source.',
  'Write the result in the format the user named; when none was named, use a short table.',
  'Quote the exact line of the source for every claim you make about it.',
  'Stop and ask when a required field is missing instead of guessing a value.',
  'Keep a log of every file you touched, with the reason, at the end of the answer.',
  'Run the checker on the result and fix each error it reports before answering.',
];
const PITFALLS = [
  'Do not rename fields the user did not ask to rename.',
  'Never drop rows silently: say how many were skipped and why.',
  'Dates are ISO 8601 (YYYY-MM-DD) unless the source uses another format throughout.',
  'Do not paste secrets, tokens or passwords into the answer, even when the input holds them.',
];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)]!;
}

/** SKILL.md text in the shape real skills have: frontmatter, when-to-use, steps, pitfalls, an example. */
export function scaleSkillMd(i: number, revision: number): { name: string; description: string; content: string } {
  const next = rng(1000 + i);
  const action = ACTIONS[i % ACTIONS.length]!;
  const topic = TOPICS[Math.floor(i / ACTIONS.length) % TOPICS.length]!;
  const name = `${action}-${topic}-${String(i).padStart(4, '0')}`;
  const description = `${action[0]!.toUpperCase()}${action.slice(1)} a ${topic} the way the team expects: checked fields, one format, a log of changes.`;
  const steps = Array.from({ length: 3 + Math.floor(next() * 4) }, () => pick(next, STEPS));
  const pitfalls = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(next, PITFALLS));
  if (revision > 1) steps.push(`Revision ${revision}: end with a one-line summary of what changed in the ${topic}.`);
  const content = [
    '---',
    `name: ${name}`,
    `description: ${description}`,
    '---',
    '',
    `# ${action} ${topic}`,
    '',
    `Use this skill when the user asks you to ${action} a ${topic}, or hands you one and asks what is wrong with it.`,
    '',
    '## Steps',
    '',
    ...steps.map((s, k) => `${k + 1}. ${s}`),
    '',
    '## Pitfalls',
    '',
    ...pitfalls.map((p) => `- ${p}`),
    '',
    '## Example',
    '',
    `User: please ${action} the attached ${topic} (${topic}-${i}.txt).`,
    `Assistant: I read ${topic}-${i}.txt, checked ${steps.length} points and wrote the result below.`,
    '',
  ].join('\n');
  return { name, description, content };
}

/** Rank 1 (or `rank`) on two targets of the fixture bundle; seeded, so every adapter's bytes differ. */
function smallAdapter(seed: number, rank = 1): Adapter {
  const next = rng(seed);
  const pair = (dIn: number, dOut: number): LoraPair => ({
    dIn,
    dOut,
    A: Float32Array.from({ length: dIn * rank }, () => next() - 0.5),
    B: Float32Array.from({ length: rank * dOut }, () => (next() - 0.5) * 0.1),
  });
  const targets = new Map<TargetKey, LoraPair>([
    ['0.q', pair(64, 64)],
    ['1.v', pair(64, 32)],
  ]);
  return { rank, alpha: rank, targets };
}

/**
 * Fills `dataDir` (a new or empty data folder) with `skills` skills, every third with 2 or 3
 * versions, and `adapters` adapters: mostly compiled from a skill version (latest or older), the
 * rest imports and cat merges of two imports, so every kind of row the pages draw is present.
 */
export function fillScaleLibrary(
  dataDir: string,
  counts: ScaleCounts = { skills: 1000, adapters: 1000 },
): ScaleLibrary {
  const db = openDatabase(join(dataDir, 'studio.db'));
  try {
    const skillsRepo = new SkillsRepo(db);
    const adaptersRepo = new AdaptersRepo(db, dataDir);
    let skillBytes = 0;
    const firsts: NewVersion[] = [];
    for (let i = 0; i < counts.skills; i++) {
      const s = scaleSkillMd(i, 1);
      const pkg = PACKAGES[i % PACKAGES.length]!;
      skillBytes += Buffer.byteLength(s.content);
      firsts.push({
        ...s,
        bodyHash: bodyHash(s.content),
        package: pkg,
        provenance: {
          kind: 'npm',
          package: pkg,
          version: '1.0.0',
          license: 'MIT',
          integrity: null,
          path: `skills/${s.name}/SKILL.md`,
        },
      });
    }
    skillsRepo.importBatch('scale-fixture', firsts);
    let versions = counts.skills;
    const revisions = (i: number) => (i % 3 === 0 ? 2 + (i % 2) : 1);
    db.transaction(() => {
      for (let i = 0; i < counts.skills; i++) {
        for (let rev = 2; rev <= revisions(i); rev++) {
          const s = scaleSkillMd(i, rev);
          skillBytes += Buffer.byteLength(s.content);
          skillsRepo.save(s.name, s.content, s.description, { kind: 'manual' }, bodyHash(s.content));
          versions++;
        }
      }
    })();

    const manifestText = readFileSync(join(SCALE_BUNDLE, 'bundle.json'));
    const bundleId = adaptersRepo.ensureBundle(
      sha256Hex(manifestText),
      JSON.parse(manifestText.toString('utf8')),
      SCALE_BUNDLE,
    );
    const compile: AdapterRecipe = { kind: 'instant', hypernet: 'perceiver', combine: 'mean' };
    const imports: StoredAdapter[] = [];
    let adapterBytes = 0;
    db.transaction(() => {
      for (let j = 0; j < counts.adapters; j++) {
        const adapter = smallAdapter(50_000 + j, j % 10 === 9 && imports.length >= 2 ? 2 : 1);
        let stored: StoredAdapter;
        if (j % 10 === 8 || (j % 10 === 9 && imports.length < 2)) {
          const tensors = sha256Hex(adapterBytesOf(adapter));
          stored = adaptersRepo.insert({
            bundleId,
            adapter,
            recipe: { kind: 'import', tensorsSha256: tensors },
          }).adapter;
          imports.push(stored);
        } else if (j % 10 === 9) {
          const [a, b] = [imports[imports.length - 1]!, imports[imports.length - 2]!];
          const recipe: AdapterRecipe = {
            kind: 'merge',
            method: 'cat',
            weights: [1, 0.5],
            rank: null,
            sources: [a.key, b.key],
          };
          const lineage = [
            { rowId: a.rowId, weight: 1 },
            { rowId: b.rowId, weight: 0.5 },
          ];
          stored = adaptersRepo.insert({ bundleId, adapter, recipe, lineage }).adapter;
        } else {
          // Skill i's latest version, or (for every fourth skill with history) its first version.
          const i = j % counts.skills;
          const name = scaleSkillMd(i, 1).name;
          const version = revisions(i) > 1 && j % 4 === 0 ? 1 : undefined;
          const skillVersionId = skillsRepo.versionRowId(name, version);
          stored = adaptersRepo.insert({ bundleId, skillVersionId, adapter, recipe: compile }).adapter;
        }
        adapterBytes += stored.bytes;
      }
    })();
    return { ...counts, versions, skillBytes, adapterBytes };
  } finally {
    db.close();
  }
}

function adapterBytesOf(adapter: Adapter): Uint8Array {
  // The import recipe names the tensors' hash; any stable digest of the factors serves the fixture.
  const parts = [...adapter.targets.values()].flatMap((p) => [p.A, p.B]);
  return Buffer.concat(parts.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength)));
}
