// Compare on a bundle without a hypernetwork (a GGUF import is one; here the tiny train-step fixture):
// the Instant and Wrong skill columns need instant adapters that cannot be made, so compare.run skips
// them with the reason and runs No skill and In context (and Distilled once the version has one).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { createStudio, type Studio } from '../../../main/api/root';
import { memoryPair } from '../../../main/api/transports/memory';
import { APP_ROOT } from '../../../main/paths';

const TRAIN_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const skill = (name: string) =>
  `---\nname: ${name}\ndescription: Says ${name}.\n---\n# ${name}\n\nAlways answer "${name}".\n`;

describe('compare on a bundle without a hypernetwork', () => {
  let tmp: string;
  let studio: Studio;
  let api: StudioApi;
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-compare-nohyper-'));
    studio = createStudio({ dataDir: tmp, defaultBundleDir: TRAIN_BUNDLE });
    api = memoryPair(studioContract, studio.dispatcher).api;
    await api.skills.save({ name: 'greet', content: skill('greet') });
    await api.skills.save({ name: 'other', content: skill('other') });
  });
  afterAll(async () => {
    await studio.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('runs None and In context, and skips Instant and Wrong skill with the reason', async () => {
    const r = await api.compare.run({ name: 'greet', prompt: 'hi', maxTokens: 2 }).result;
    expect(r.columns.map((c) => c.condition)).toEqual(['none', 'in_context']);
    expect(r.skipped.map((s) => s.condition)).toEqual(['parametric', 'wrong_skill']);
    for (const s of r.skipped) expect(s.reason).toMatch(/has no hypernetwork, .*compile by distillation/);
    expect((await api.adapters.list({})).length).toBe(0);
  }, 60_000);
});
