// "Try an example" (import.example): imports the SkillWorld example skills, gives each its practice
// questions as tests when it has none (a user's own tests are never replaced), and returns the
// held-out tasks the compare page runs and checks. docs/guide.md describes the path.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExampleSet, ExampleTask } from '../../../common/api/example-schemas';
import type { VerifierTest } from '../../../common/api/verify-schemas';
import { StudioError } from '../../../common/errors';
import { ExpectSchema } from '../../../common/verify/expect';
import { APP_ROOT } from '../../paths';
import type { ImportService } from './import-service';
import type { VerifyService } from './verify-service';

export const EXAMPLES_DIR = join(APP_ROOT, 'resources', 'examples', 'skillworld');

interface Row {
  task_id: string;
  skill: string;
  messages: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string }[];
  checker: unknown;
  reference: string;
}

function rows(file: string): Row[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new StudioError('not_found', `the example files are missing: ${(err as Error).message}`);
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Row);
}

export class ExampleService {
  constructor(
    private readonly imports: ImportService,
    private readonly verify: VerifyService,
    private readonly dir: string = EXAMPLES_DIR,
  ) {}

  async load(): Promise<ExampleSet> {
    const manifest = JSON.parse(readFileSync(join(this.dir, 'examples.json'), 'utf8')) as {
      open: string;
      skills: { name: string; rule: string }[];
    };
    const practice = rows(join(this.dir, 'practice.jsonl'));
    const tasks = rows(join(this.dir, 'tasks.jsonl'));
    const result = await this.imports.run(
      { source: join(this.dir, 'skills') },
      { emit: () => {}, signal: new AbortController().signal },
    );
    const skills = manifest.skills.map(({ name, rule }) => {
      let set = this.verify.get({ name });
      if (set.tests.length === 0) {
        const tests: VerifierTest[] = practice
          .filter((r) => r.skill === name)
          .map((r) =>
            r.messages.length === 1 && r.messages[0]!.role === 'user'
              ? { id: r.task_id, prompt: r.messages[0]!.content, expect: ExpectSchema.parse(r.checker) }
              : { id: r.task_id, messages: r.messages, expect: ExpectSchema.parse(r.checker) },
          );
        set = this.verify.set({ name, tests });
      }
      const held: ExampleTask[] = tasks
        .filter((r) => r.skill === name)
        .map((r) => ({
          id: r.task_id,
          prompt: r.messages[0]!.content,
          expect: ExpectSchema.parse(r.checker),
          reference: r.reference,
        }));
      return { name, version: set.skill.version, rule, tests: set.tests.length, tasks: held };
    });
    return { imported: result.imported, open: manifest.open, skills };
  }
}
