// The smaller defects of the hardening round (docs/security.md), over the in-memory pair and the web
// host, and from the CLI where the path exists: merge weights and ranks that are not finite or not
// positive, invisible characters in names, rejected uploads left in cache/uploads, a lowercase
// `bearer` scheme, and GET on /v1/chat/completions.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectImport } from '../../../main/skills/importer';
import { skillMd } from '../../fixtures/skills/skill-md';
import { tgzBytes } from '../../fixtures/skills/tar-bytes';
import { FIXTURE_BUNDLE, writeFixturePeft } from '../adapters/fixture';
import { failure, studioSuite, transports, withRoutes } from '../api/transports';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const INVISIBLE: [string, string][] = [
  ['zero\u200Bwidth', 'U+200B'],
  ['soft\u00ADhyphen', 'U+00AD'],
  ['b\uFEFFom', 'U+FEFF'],
  ['line\u2028sep', 'U+2028'],
  ['lone\uD800surrogate', 'U+D800'],
];
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'pskills-hardening-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.each(transports)('over $name', (transport) => {
  const ids: string[] = [];

  const s = studioSuite(transport, 'pskills-hardening-data-', { defaultBundleDir: FIXTURE_BUNDLE });

  beforeAll(async () => {
    for (const seed of [1, 2]) {
      const dir = join(s.dataDir, `peft-${seed}`);
      await writeFixturePeft(dir, seed);
      ids.push((await s.api.adapters.import({ dir })).adapter.id);
    }
  });

  it('merge refuses weights of 3e38, non-finite weights and rank 0, naming the field', async () => {
    for (const weights of [
      [3e38, 1],
      [1, -3e38],
    ]) {
      const err = await failure(s.api.adapters.merge({ ids, method: 'svd', weights, rank: 4 }).result);
      expect(err.code).toBe('invalid_input');
      expect(err.message).toMatch(/weights/);
    }
    const zero = await failure(s.api.adapters.merge({ ids, method: 'svd', rank: 0 }).result);
    expect(zero.code).toBe('invalid_input');
    expect(zero.message).toMatch(/rank/);
    const preview = await failure(s.api.adapters.mergePreview({ ids, method: 'cat', weights: [3e38, 1] }));
    expect(preview.code).toBe('invalid_input');
    expect((await s.api.adapters.merge({ ids, method: 'svd', weights: [0.5, 0.5], rank: 4 }).result).adapter.rank).toBe(
      4,
    );
  });

  it('refuses skill names with invisible characters, naming the code point, and writes nothing', async () => {
    for (const [name, cp] of INVISIBLE) {
      const err = await failure(s.api.skills.create({ name }));
      expect(err.code).toBe('invalid_input');
      expect(err.message).toContain(`invisible character ${cp}`);
    }
    expect(await s.api.skills.list({})).toEqual([]);
  });

  it('removes a rejected upload from cache/uploads', async () => {
    const uploads = join(s.dataDir, 'cache', 'uploads');
    const unsafe = tgzBytes([{ path: '../evil/SKILL.md', body: skillMd({ name: 'evil' }) }]);
    const err = await failure(
      s.api.import.upload({ fileName: 'evil.tgz', data: unsafe.toString('base64') }, () => {}).result,
    );
    expect(err.code).toBe('import_failed');
    expect(existsSync(uploads) ? readdirSync(uploads) : []).toEqual([]);
    const nothing = tgzBytes([{ path: 'package/README.md', body: '# no skills here\n' }]);
    const empty = await s.api.import.upload({ fileName: 'empty.tgz', data: nothing.toString('base64') }, () => {})
      .result;
    expect(empty).toMatchObject({ imported: 0, unchanged: 0 });
    expect(readdirSync(uploads)).toEqual([]);
  });
});

describe('imports skip SKILL.md names with invisible characters', () => {
  it('records each as skipped with the code point (a lone surrogate as the invalid UTF-8 it is)', async () => {
    const src = join(work, 'names');
    const text = INVISIBLE.slice(0, 4);
    text.forEach(([name], i) => {
      mkdirSync(join(src, `s${i}`), { recursive: true });
      writeFileSync(join(src, `s${i}`, 'SKILL.md'), skillMd({ name }));
    });
    mkdirSync(join(src, 'lone'));
    const [head, tail] = skillMd({ name: 'lone-X-surrogate' }).split('X');
    writeFileSync(
      join(src, 'lone', 'SKILL.md'),
      Buffer.concat([Buffer.from(head!), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(tail!)]),
    );
    const r = await collectImport(src, { cacheDir: join(work, 'cache') });
    expect(r.versions).toEqual([]);
    expect(r.skipped[0]!.reason).toMatch(/^invalid UTF-8 at byte offset \d+/);
    expect(r.skipped.slice(1).map((s) => /invisible character (U\+[0-9A-F]+)/.exec(s.reason)?.[1])).toEqual(
      text.map(([, cp]) => cp),
    );
  });
});

describe('the web host', () => {
  const host = studioSuite(withRoutes(), 'pskills-hardening-host-');

  it('takes the bearer scheme in any case (RFC 7235)', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const res = await fetch(`${host.origin}/api/call/app.info`, {
        method: 'POST',
        headers: { authorization: `${scheme} ${host.token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status, scheme).toBe(200);
    }
  });

  it('answers GET /v1/chat/completions with 405 and Allow: POST', async () => {
    const res = await fetch(`${host.origin}/v1/chat/completions`, {
      headers: { authorization: `bearer ${host.token}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'method_not_allowed' } });
    const models = await fetch(`${host.origin}/v1/models`, {
      method: 'POST',
      headers: { authorization: `Bearer ${host.token}` },
    });
    expect(models.status).toBe(405);
    expect(models.headers.get('allow')).toBe('GET');
  });
});

describe('pskills merge and skills create', () => {
  it('refuse a 3e38 weight, rank 0 and an invisible character with exit 2', () => {
    const dataDir = mkdtempSync(join(work, 'cli-'));
    const pskills = (...args: string[]) =>
      spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
    const w = pskills('merge', 'aaaaaa', 'bbbbbb', '--method', 'svd', '--weights', '3e38,1', '--rank', '4');
    expect(w.status).toBe(2);
    expect(w.stderr).toMatch(/weights/);
    const r = pskills('merge', 'aaaaaa', 'bbbbbb', '--method', 'svd', '--rank', '0');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/rank/);
    const n = pskills('skills', 'create', 'zero\u200Bwidth');
    expect(n.status).toBe(2);
    expect(n.stderr).toMatch(/invisible character U\+200B/);
  });
});
