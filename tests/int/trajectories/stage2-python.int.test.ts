// The trajectories export is read by the Python stage-2 trainer: each `--stage2` line becomes a chat
// example the way pskills_train.hyper.train reads its trajectories file (json per line; skill_text
// tokenized as the hypernetwork's source; messages rendered with the bundle's chat template, labels on
// the assistant turns). Needs training/.venv (bash training/setup_venv.sh); skipped without it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrajectoryService } from '../../../main/api/services/trajectory-service';
import { openDatabase, type Database } from '../../../main/store/db';
import { SettingsRepo } from '../../../main/store/settings-repo';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { TrajectoriesRepo } from '../../../main/store/trajectories-repo';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../../../main/paths';

const PYTHON = join(APP_ROOT, 'training', '.venv', 'bin', 'python');

const READER = `
import json, sys
from tokenizers import Tokenizer
from pskills_train.hyper.examples import Stage1Builder, chat_example
path, bundle = sys.argv[1], sys.argv[2]
tok = Tokenizer.from_file(bundle + "/tokenizer.json")
template = json.load(open(bundle + "/tokenizer_config.json"))["chat_template"]
builder = Stage1Builder(tok, "<skill>", 512, 64, 0.2, 0.6)
# as Trainer._trajectories reads the file, and Trainer._chat builds each example
recs = [json.loads(ln) for ln in open(path, encoding="utf-8").read().splitlines() if ln.strip()]
out = []
for r in recs:
    ex = chat_example(tok, template, r["messages"], builder.ids(r["skill_text"]), 256)
    out.append({"skill": r["skill"], "source": len(ex.source), "labels": sum(ex.labels_mask), "tokens": len(ex.prompt) + len(ex.target)})
print(json.dumps(out))
`;

describe.skipIf(!existsSync(PYTHON))('stage-2 trainer reads the JSONL export', () => {
  let dir: string;
  let db: Database;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pskills-stage2-'));
    db = openDatabase(':memory:');
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every --stage2 line becomes a chat example with labels on the answer', () => {
    const skills = new SkillsRepo(db);
    const content =
      '---\nname: tar-archives\ndescription: Pack and unpack tar files.\n---\n\n# Tar\n\n1. Unpack with tar -xzf FILE.\n';
    skills.save('tar-archives', content, 'Pack and unpack tar files.', { kind: 'manual' }, 'h'.repeat(64));
    const service = new TrajectoryService(new TrajectoriesRepo(db), skills, new SettingsRepo(db));
    const [up] = service.record([
      {
        source: 'compare',
        skill: { name: 'tar-archives' },
        condition: 'instant',
        messages: [
          { role: 'user', content: 'How do I unpack a.tgz?' },
          { role: 'assistant', content: 'Run tar -xzf a.tgz.' },
        ],
      },
    ]);
    service.rate({ id: up!.id, rating: 'up' });
    service.record([
      {
        source: 'eval',
        skill: { name: 'tar-archives' },
        condition: 'in_context',
        verdict: { passed: true, test: 'multi' },
        messages: [
          { role: 'user', content: 'Look up the archive, then unpack it.' },
          { role: 'assistant', content: 'CALL lookup(name="a")' },
          { role: 'tool', content: 'a.tgz' },
          { role: 'assistant', content: 'tar -xzf a.tgz' },
        ],
      },
    ]);
    service.record([
      {
        source: 'playground',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
      },
    ]); // no skill: not for stage 2
    const file = join(dir, 'stage2.jsonl');
    expect(service.export({ file, stage2: true }).count).toBe(2);

    const r = spawnSync(PYTHON, ['-c', READER, file, DEFAULT_BUNDLE_DIR], {
      encoding: 'utf8',
      timeout: 120_000,
      cwd: join(APP_ROOT, 'training'),
    });
    expect(r.status, r.stderr).toBe(0);
    const examples = JSON.parse(r.stdout) as { skill: string; source: number; labels: number; tokens: number }[];
    expect(examples).toHaveLength(2);
    for (const e of examples) {
      expect(e.skill).toBe('tar-archives');
      expect(e.source).toBeGreaterThan(5); // the skill text, tokenized for the hypernetwork
      expect(e.labels).toBeGreaterThan(0); // loss on the assistant tokens
      expect(e.labels).toBeLessThan(e.tokens);
    }
  });
});
