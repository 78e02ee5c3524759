// Run by training/tests/test_peft_export.py: builds an adapter the way a user does (two PEFT folders
// imported, merged with cat, exported through the StudioApi) into argv[2], then prints one JSON line
// with the engine's logits for a prompt with and without that adapter, for the PEFT parity check.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { studioContract } from '../../../common/api/contract';
import { readPeftDir } from '../../../main/adapters/peft-dir';
import { createStudio } from '../../../main/api/root';
import { directClient } from '../../../main/api/transports/direct';
import { foldAdapter, loadBundle, type EngineAdapter } from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import { FIXTURE_BUNDLE, writeFixturePeft } from './fixture';

const PROMPT = '# Review a branch\n\n## Steps\n1. Run the tests, then merge.';

const out = process.argv[2];
if (!out) throw new Error('usage: node --import tsx tests/int/adapters/peft-logits.ts OUT_DIR');
const dataDir = mkdtempSync(join(tmpdir(), 'pskills-peft-logits-'));
const studio = createStudio({ dataDir, defaultBundleDir: FIXTURE_BUNDLE });
try {
  const api = directClient(studioContract, studio.dispatcher);
  await writeFixturePeft(join(dataDir, 'a'), 31, { rank: 3, alpha: 6 });
  await writeFixturePeft(join(dataDir, 'b'), 32, { rank: 2, alpha: 8 });
  const a = await api.adapters.import({ dir: join(dataDir, 'a') });
  const b = await api.adapters.import({ dir: join(dataDir, 'b') });
  const merged = await api.adapters.merge({ ids: [a.adapter.id, b.adapter.id], method: 'cat', weights: [1, -0.5] })
    .result;
  await api.adapters.export({ id: merged.adapter.id, dir: resolve(out) });

  // The studio's sessions live in its engine worker: the logits come from the same folder loaded here.
  const bundle = await loadBundle((await studio.engine.current()).dir);
  const ids = bundle.tokenizer.encode(PROMPT);
  const logits = async (adapter: EngineAdapter | null) => {
    const step = await bundle.lm.forward({
      batch: 1,
      inputIds: ids,
      positionIds: ids.map((_, i) => i),
      attentionMask: ids.map(() => 1),
      cache: KvCache.empty(bundle.manifest, 1),
      lora: bundle.lm.loraFeeds([adapter]),
    });
    return Array.from(step.logits);
  };
  // The engine runs what the export wrote, so this checks the file, not only the stored tensors.
  const exported = foldAdapter((await readPeftDir(resolve(out))).adapter);
  const result = {
    ids,
    vocab: bundle.lm.vocab,
    rank: merged.adapter.rank,
    base: await logits(null),
    adapted: await logits(exported),
  };
  await bundle.dispose();
  process.stdout.write(JSON.stringify(result) + '\n');
} finally {
  await studio.dispose();
  rmSync(dataDir, { recursive: true, force: true });
}
