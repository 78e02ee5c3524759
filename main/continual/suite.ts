// The continual suite: SkillWorld worlds whose rules show only through their tasks. One world per
// episode, in an order drawn from the seed; each world's tasks are split into demonstrations (what
// the episode solves and learns a lesson from) and held-out tasks (what measures the lesson later).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExpectSchema, type Expect } from '../../common/verify/expect';
import { StudioError } from '../../common/errors';
import { APP_ROOT } from '../paths';
import { seededRng, type Rng } from '../engine/sampler';

/** The committed suite: `python -m pskills_train.skillworld generate --split test --n 32 --seed 0
 *  --tasks-per-skill 8 --filler tests/fixtures/skillworld/filler`, its tasks.jsonl and manifest.json. */
export const DEFAULT_SUITE_DIR = join(APP_ROOT, 'resources', 'skillworld', 'continual');

export interface SuiteMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface SuiteTask {
  id: string;
  /** The chat up to the answer. */
  messages: SuiteMessage[];
  checker: Expect;
  /** The generator's reference answer (passes `checker`). */
  reference: string;
}

export interface World {
  /** The SkillWorld skill's name; its SKILL.md is never shown. */
  name: string;
  family: string;
  tasks: SuiteTask[];
}

export interface Episode {
  episode: number;
  world: World;
  demos: SuiteTask[];
  heldOut: SuiteTask[];
}

/** Fisher-Yates with a seeded stream: the same seed gives the same order on every machine. */
function shuffled<T>(items: readonly T[], random: Rng): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** The worlds of a SkillWorld folder's tasks.jsonl, in file order; bad lines are named. */
export function loadWorlds(dir: string): World[] {
  const file = join(dir, 'tasks.jsonl');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new StudioError('not_found', `${dir}: not a SkillWorld folder (${(err as Error).message})`);
  }
  const worlds = new Map<string, World>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${file}: line ${i + 1}`;
    let t: Record<string, unknown>;
    try {
      t = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new StudioError('invalid_input', `${where}: not JSON`);
    }
    const { skill, task_id: id, messages, checker, reference, family } = t;
    if (typeof skill !== 'string' || typeof id !== 'string' || typeof reference !== 'string')
      throw new StudioError('invalid_input', `${where}: "skill", "task_id" and "reference" must be strings`);
    if (
      !Array.isArray(messages) ||
      messages.length === 0 ||
      !messages.every(
        (m: { role?: unknown; content?: unknown }) => ROLES.has(m.role as string) && typeof m.content === 'string',
      )
    )
      throw new StudioError('invalid_input', `${where}: "messages" must be a list of {role, content}`);
    const spec = ExpectSchema.safeParse(checker);
    if (!spec.success) throw new StudioError('invalid_input', `${where}: "checker": ${spec.error.issues[0]?.message}`);
    let world = worlds.get(skill);
    if (!world) worlds.set(skill, (world = { name: skill, family: String(family ?? ''), tasks: [] }));
    world.tasks.push({ id, messages: messages as SuiteMessage[], checker: spec.data, reference });
  });
  if (worlds.size === 0) throw new StudioError('invalid_input', `${file} has no tasks`);
  return [...worlds.values()];
}

/** `episodes` worlds in an order drawn from `seed`, each with its tasks split into demos and held-out. */
export function planEpisodes(
  worlds: readonly World[],
  opts: { episodes: number; seed: number; demos: number; heldOut: number },
): Episode[] {
  if (opts.episodes > worlds.length)
    throw new StudioError(
      'invalid_input',
      `episodes: ${opts.episodes} asked, the suite has ${worlds.length} worlds (one per episode)`,
    );
  const random = seededRng(opts.seed);
  return shuffled(worlds, random)
    .slice(0, opts.episodes)
    .map((world, i) => {
      const need = opts.demos + opts.heldOut;
      if (world.tasks.length < need)
        throw new StudioError(
          'invalid_input',
          `world ${world.name} has ${world.tasks.length} tasks; ${opts.demos} demos + ${opts.heldOut} held-out need ${need}`,
        );
      const tasks = shuffled(world.tasks, random);
      return {
        episode: i + 1,
        world,
        demos: tasks.slice(0, opts.demos),
        heldOut: tasks.slice(opts.demos, need),
      };
    });
}
