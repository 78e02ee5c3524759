// The Adapters page's Delete and Import (renderer/src/lib/adapters/adapter-actions.ts) over the in-memory
// transport against the real services, SQLite and the tiny fixture bundle: a PEFT folder imported (and
// found again), bad folders named, the dependents a delete shows, the service's refusals kept as sent.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AdapterSummary, AdapterWritten } from '../../../common/api/adapter-schemas';
import {
  AdapterImporter,
  AdapterRemoval,
  blocksDelete,
  dependentsOf,
  exportDirProblem,
  importDirProblem,
  type ImportSnapshot,
} from '../../../renderer/src/lib/adapters/adapter-actions';
import { FIXTURE_BUNDLE, writeFixturePeft } from '../adapters/fixture';
import { memory, studioSuite } from './transports';

describe('Adapters page Delete and Import over the in-memory transport', () => {
  const imported: AdapterSummary[] = [];
  let merged: AdapterSummary;
  let global1: AdapterSummary;

  const suite = studioSuite(memory, 'pskills-adapter-actions-', { defaultBundleDir: FIXTURE_BUNDLE });

  it('imports PEFT folders; the same folder again finds the stored adapter', async () => {
    const snaps: ImportSnapshot[] = [];
    const done: AdapterWritten[] = [];
    const importer = new AdapterImporter(
      suite.api,
      (s) => snaps.push(s),
      (w) => done.push(w),
    );
    for (const seed of [1, 2]) {
      const dir = join(suite.dataDir, `peft-${seed}`);
      await writeFixturePeft(dir, seed);
      expect(await importer.run(dir)).toBe(true);
      expect(importer.snapshot.result!.created).toBe(true);
      imported.push(importer.snapshot.result!.adapter);
    }
    expect(snaps.some((s) => s.busy)).toBe(true);
    expect(await importer.run(join(suite.dataDir, 'peft-1'))).toBe(true);
    expect(importer.snapshot.result).toMatchObject({ created: false, adapter: { id: imported[0]!.id } });
    expect(done.map((w) => w.created)).toEqual([true, true, false]);
    expect((await suite.api.adapters.list({})).map((a) => a.id).sort()).toEqual(imported.map((a) => a.id).sort());
    expect(imported[0]!.recipe.kind).toBe('import');
  });

  it('names an export folder it cannot send in words, not by the API field', () => {
    expect(exportDirProblem('  ')).toBe('Give the folder to write the PEFT adapter to.');
    expect(exportDirProblem('relative/out')).toBe(
      'relative/out is not an absolute path: give the full path of the folder.',
    );
    expect(exportDirProblem(' /tmp/out ')).toBeNull();
    expect(exportDirProblem('C:\\exports\\a')).toBeNull();
  });

  it('names a folder it cannot send, and keeps the API error for one it can', async () => {
    const importer = new AdapterImporter(suite.api);
    expect(importDirProblem('  ')).toMatch(/Give the PEFT folder/);
    expect(await importer.run('relative/peft')).toBe(false);
    expect(importer.snapshot.error).toEqual({
      code: 'invalid_input',
      message: 'relative/peft is not an absolute path: give the full path of the folder.',
    });
    expect(await importer.run(join(suite.dataDir, 'nowhere'))).toBe(false);
    expect(importer.snapshot.error).toMatchObject({ code: 'not_found', message: expect.stringContaining('nowhere') });
    const empty = join(suite.dataDir, 'empty');
    mkdirSync(empty);
    expect(await importer.run(empty)).toBe(false);
    // the read gate (docs/security.md) reports the folder's missing file as not found, naming it
    expect(importer.snapshot.error!.code).toBe('not_found');
    expect(importer.snapshot.error!.message).toMatch(/adapter_config\.json|adapter_model\.safetensors/);
    expect(importer.snapshot.busy).toBe(false);
    expect(await suite.api.adapters.list({})).toHaveLength(2);
  });

  it('shows what depends on an adapter: merges that name it, global versions that are it', async () => {
    merged = (await suite.api.adapters.merge({ ids: imported.map((a) => a.id), method: 'cat' }).result).adapter;
    global1 = (await suite.api.ema.update({ adapterId: imported[0]!.id })).adapter;
    const list = await suite.api.adapters.list({});
    const history = (await suite.api.ema.history({})).versions;

    const ofFirst = dependentsOf(imported[0]!, list, history);
    expect(ofFirst.children.map((a) => a.id)).toContain(merged.id);
    expect(ofFirst.globalVersions).toEqual([]);
    expect(blocksDelete(ofFirst)).toBe(true);
    const ofGlobal = dependentsOf(global1, list, history);
    expect(ofGlobal).toEqual({ children: [], globalVersions: [1] });
    expect(blocksDelete(ofGlobal)).toBe(true);
    expect(blocksDelete(dependentsOf(merged, list, history))).toBe(false);
  });

  it('delete: the service refuses what others depend on (its message kept), deletes the rest', async () => {
    const deleted: string[] = [];
    const removal = new AdapterRemoval(suite.api, undefined, (id) => deleted.push(id));
    const none = { children: [], globalVersions: [] };

    removal.ask(global1, none); // even when the page knew of nothing, the service checks
    expect(await removal.confirm()).toBe(false);
    expect(removal.snapshot.error).toEqual({
      code: 'conflict',
      message: `adapter ${global1.key.slice(0, 12)} is global adapter version 1; history is kept`,
    });
    expect(removal.snapshot.target).toEqual(global1); // the dialog stays open with the reason

    removal.ask(imported[1]!, none);
    expect(await removal.confirm()).toBe(false);
    expect(removal.snapshot.error!.message).toMatch(
      new RegExp(`is in the lineage of adapter ${merged.key.slice(0, 12)}; delete that one first`),
    );
    removal.close();
    expect(removal.snapshot).toMatchObject({ target: null, error: null });

    removal.ask(merged, none);
    expect(await removal.confirm()).toBe(true);
    expect(removal.snapshot.target).toBeNull();
    removal.ask(imported[1]!, none);
    expect(await removal.confirm()).toBe(true);
    expect(deleted).toEqual([merged.id, imported[1]!.id]);
    expect((await suite.api.adapters.list({})).map((a) => a.id).sort()).toEqual([imported[0]!.id, global1.id].sort());
  });
});
