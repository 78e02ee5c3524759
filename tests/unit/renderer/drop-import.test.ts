// What a drop imports: a path under Electron (folder or .tgz), a .tgz's bytes in a browser tab, and a
// clear refusal for anything else (several items, other files, folders without a path, big archives).
import { describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '../../../common/api/skill-schemas';
import {
  carriesFiles,
  isPeftListing,
  planDrop,
  toBase64,
  type DroppedItem,
} from '../../../renderer/src/lib/skills/drop-import';

const item = (over: Partial<DroppedItem>): DroppedItem => ({
  name: 'pack-1.0.0.tgz',
  kind: 'file',
  size: 1000,
  path: null,
  ...over,
});

describe('planDrop', () => {
  it('imports a folder or a .tgz by path when the drop has one (Electron)', () => {
    expect(planDrop([item({ name: 'skills', kind: 'directory', path: '/home/me/skills' })])).toEqual({
      action: 'import-path',
      path: '/home/me/skills',
    });
    expect(planDrop([item({ path: '/tmp/pack-1.0.0.tgz' })])).toEqual({
      action: 'import-path',
      path: '/tmp/pack-1.0.0.tgz',
    });
    expect(planDrop([item({ name: 'pack.TAR.GZ', kind: 'unknown', path: '/tmp/pack.TAR.GZ' })])).toMatchObject({
      action: 'import-path',
    });
  });

  it('a PEFT adapter folder goes to adapters.import by path; without a path it is refused with where to type it', () => {
    const peft = item({ name: 'my-lora', kind: 'directory', peft: true });
    expect(planDrop([{ ...peft, path: '/home/me/my-lora' }])).toEqual({
      action: 'import-adapter',
      path: '/home/me/my-lora',
    });
    const plan = planDrop([peft]);
    expect(plan.action).toBe('refuse');
    expect(plan.action === 'refuse' && plan.message).toMatch(
      /my-lora is a PEFT adapter folder.*Import PEFT… on the Adapters page/,
    );
    expect(planDrop([item({ name: 'skills', kind: 'directory', path: '/s', peft: false })])).toMatchObject({
      action: 'import-path',
    });
    expect(isPeftListing(['adapter_model.safetensors', 'adapter_config.json'])).toBe(true);
    expect(isPeftListing(['SKILL.md', 'package.json'])).toBe(false);
  });

  it('uploads a .tgz without a path (a browser tab), even when the entry kind is unknown', () => {
    expect(planDrop([item({})])).toEqual({ action: 'upload', index: 0, fileName: 'pack-1.0.0.tgz' });
    expect(planDrop([item({ kind: 'unknown' })])).toMatchObject({ action: 'upload' });
    expect(planDrop([item({ size: MAX_UPLOAD_BYTES })])).toMatchObject({ action: 'upload' });
  });

  it('refuses with a message that names the problem', () => {
    const refuse = (items: DroppedItem[]) => {
      const plan = planDrop(items);
      if (plan.action !== 'refuse') throw new Error(`expected a refusal, got ${plan.action}`);
      return plan.message;
    };
    expect(refuse([])).toMatch(/Nothing to import/);
    expect(refuse([item({}), item({ name: 'b.tgz' })])).toMatch(/^2 items were dropped/);
    expect(refuse([item({ name: 'notes.txt', path: '/tmp/notes.txt' })])).toMatch(
      /notes\.txt is not a folder or a \.tgz/,
    );
    expect(refuse([item({ name: 'skills', kind: 'directory' })])).toMatch(/cannot read the dropped folder skills/);
    // No entry (a synthetic drop) and no path: judged by the name.
    expect(refuse([item({ name: 'notes.txt', kind: 'unknown' })])).toMatch(/notes\.txt is not a folder or a \.tgz/);
    expect(refuse([item({ size: MAX_UPLOAD_BYTES + 1 })])).toMatch(/over the 1\.25 MiB.*type its path/);
  });
});

describe('helpers', () => {
  it('recognises a drag of files', () => {
    expect(carriesFiles(['Files'])).toBe(true);
    expect(carriesFiles(['text/plain'])).toBe(false);
    expect(carriesFiles(null)).toBe(false);
  });

  it('encodes base64 like Node, across the chunk boundary', () => {
    const bytes = new Uint8Array(0x8000 * 2 + 7).map((_, i) => (i * 31) % 256);
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(toBase64(new Uint8Array())).toBe('');
  });
});
