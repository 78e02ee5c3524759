// TrajectoryService over in-memory libraries: recording and the setting, listing and rating, and the
// JSONL export/import (round trip to the same bytes, every line checked first, one transaction).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StudioError } from '../../../common/errors';
import { TrajectoryService, type RecordInput } from '../../../main/api/services/trajectory-service';
import { openDatabase, type Database } from '../../../main/store/db';
import { SettingsRepo } from '../../../main/store/settings-repo';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { TrajectoriesRepo } from '../../../main/store/trajectories-repo';
import { hashOf, skillText } from './builders';

const BUNDLE = { id: 'tiny', sha256: 'b'.repeat(64) };
const KEY = 'a'.repeat(64);

function library(start = Date.parse('2025-03-01T00:00:00.000Z')) {
  const db = openDatabase(':memory:');
  let t = start;
  const clock = () => new Date((t += 1000));
  const skills = new SkillsRepo(db, clock);
  const service = new TrajectoryService(new TrajectoriesRepo(db), skills, new SettingsRepo(db, clock), clock);
  return { db, skills, service };
}

const save = (skills: SkillsRepo, name: string, body = `# ${name}\n\nDo the thing.\n`) =>
  skills.save(name, skillText(name, `About ${name}`, body), `About ${name}`, { kind: 'manual' }, hashOf(body));

const run = (over: Partial<RecordInput> = {}): RecordInput => ({
  source: 'compare',
  skill: { name: 'alpha' },
  condition: 'instant',
  adapterKey: KEY,
  bundle: BUNDLE,
  sampling: { temperature: 0, maxTokens: 16 },
  messages: [
    { role: 'user', content: 'How?' },
    { role: 'assistant', content: 'Like this.' },
  ],
  details: { finishReason: 'eos' },
  ...over,
});

const count = (db: Database) => db.prepare('SELECT COUNT(*) FROM trajectories').pluck().get() as number;

const rejection = (f: () => unknown): StudioError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StudioError);
    return e as StudioError;
  }
  return expect.fail('expected an error');
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-traj-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('recording and the storeTrajectories setting', () => {
  it('records with the skill version, adapter, bundle and sampling; nothing when the setting is off', () => {
    const { db, skills, service } = library();
    save(skills, 'alpha');
    const [t] = service.record([run()]);
    expect(t).toMatchObject({
      source: 'compare',
      skill: { name: 'alpha', version: 1, linked: true },
      condition: 'instant',
      adapter: KEY,
      bundle: BUNDLE,
      sampling: { temperature: 0, maxTokens: 16 },
      verdict: null,
      rating: null,
    });
    expect(t!.skill!.sha256).toBe(skills.get('alpha')!.version.sha256);
    expect(service.settings()).toEqual({
      storeTrajectories: true,
      llmBaseUrl: null,
      llmModel: null,
      llmApiKey: null,
      executionProvider: 'cpu',
      maxMergeRank: 512,
    });
    service.setSettings({ storeTrajectories: false });
    expect(service.record([run()])).toEqual([]);
    expect(count(db)).toBe(1);
    // An explicit add stores whatever the setting says.
    expect(service.add({ source: 'playground', messages: [{ role: 'user', content: 'hi' }] })).toMatchObject({
      source: 'playground',
      skill: null,
    });
    expect(count(db)).toBe(2);
  });

  it('record never throws: an unknown skill is logged and nothing is written', () => {
    const { db, service } = library();
    expect(service.record([run({ skill: { name: 'nope' } })])).toEqual([]);
    expect(count(db)).toBe(0);
    expect(
      rejection(() =>
        service.add({ source: 'compare', skill: { name: 'nope' }, messages: [{ role: 'user', content: 'x' }] }),
      ).code,
    ).toBe('not_found');
  });
});

describe('list, show, rate', () => {
  it('filters by skill, source, rating and verdict, newest first; show takes a prefix', () => {
    const { skills, service } = library();
    save(skills, 'alpha');
    save(skills, 'beta');
    const [a] = service.record([run()]);
    const [b] = service.record([
      run({ source: 'eval', skill: { name: 'beta' }, verdict: { passed: true, test: 't1' } }),
    ]);
    const [c] = service.record([
      run({
        source: 'playground',
        skill: null,
        condition: 'none',
        adapterKey: null,
        verdict: { passed: false, test: 't2', reason: 'no' },
      }),
    ]);
    expect(service.list({}).items.map((t) => t.id)).toEqual([c!.id, b!.id, a!.id]);
    expect(service.list({ skill: 'beta' }).items.map((t) => t.id)).toEqual([b!.id]);
    expect(service.list({ source: 'compare' }).items.map((t) => t.id)).toEqual([a!.id]);
    expect(service.list({ verdict: 'passed' }).items.map((t) => t.id)).toEqual([b!.id]);
    expect(service.list({ verdict: 'failed' }).items.map((t) => t.id)).toEqual([c!.id]);
    expect(service.list({ verdict: 'none' }).items.map((t) => t.id)).toEqual([a!.id]);
    expect(service.list({ limit: 1, offset: 1 })).toMatchObject({
      total: 3,
      items: [{ id: b!.id, prompt: 'How?', answer: 'Like this.', turns: 2 }],
    });

    expect(service.show({ id: a!.id.slice(0, 8) }).messages).toHaveLength(2);
    expect(rejection(() => service.show({ id: 'ffffff' })).code).toBe('not_found');

    const rated = service.rate({ id: a!.id, rating: 'up', note: 'good answer' });
    expect(rated.rating).toMatchObject({ value: 'up', note: 'good answer' });
    expect(service.list({ rating: 'up' }).items.map((t) => t.id)).toEqual([a!.id]);
    expect(service.list({ rating: 'unrated' }).total).toBe(2);
    expect(service.rate({ id: a!.id, rating: null }).rating).toBeNull();
    expect(rejection(() => service.rate({ id: a!.id, rating: null, note: 'x' })).code).toBe('invalid_input');
  });
});

describe('JSONL export and import', () => {
  /** A library with three trajectories: compare (rated), eval (passed) and playground (no skill). */
  function filled() {
    const lib = library();
    save(lib.skills, 'alpha');
    const [a] = lib.service.record([
      run({
        messages: [
          { role: 'user', content: 'Ünïcödé ‮ and "quotes"\n' },
          { role: 'assistant', content: 'ok' },
        ],
      }),
    ]);
    lib.service.rate({ id: a!.id, rating: 'up', note: 'fine' });
    lib.service.record([
      run({ source: 'eval', verdict: { passed: true, test: 't1' }, details: { verify: { testsFrom: 1 } } }),
    ]);
    lib.service.record([
      run({ source: 'playground', skill: null, condition: 'none', adapterKey: null, details: { raw: true } }),
    ]);
    return lib;
  }

  it('writes the stage-2 fields first, and export → import → export gives the same bytes', () => {
    const a = filled();
    const first = join(dir, 'a.jsonl');
    expect(a.service.export({ file: first })).toMatchObject({ file: first, count: 3 });
    const text = readFileSync(first, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(lines[0]!).slice(0, 4)).toEqual(['skill', 'skill_text', 'messages', 'source']);
    expect(lines[0]).toMatchObject({
      skill: 'alpha',
      skill_text: a.skills.get('alpha')!.content,
      source: 'compare',
      skill_version: 1,
      sampling: { temperature: 0, max_tokens: 16 },
      rating: { value: 'up', note: 'fine' },
    });
    expect(lines[2]).toMatchObject({ skill: null, skill_text: null, source: 'playground' });

    // Another library without the skill: the text travels with the rows.
    const b = library(Date.parse('2030-01-01T00:00:00.000Z'));
    expect(b.service.importFile({ file: first })).toEqual({ imported: 3, unchanged: 0, updated: 0 });
    expect(b.service.list({ skill: 'alpha' }).items[0]!.skill).toMatchObject({
      name: 'alpha',
      version: 1,
      linked: false,
    });
    const second = join(dir, 'b.jsonl');
    b.service.export({ file: second });
    expect(readFileSync(second, 'utf8')).toBe(text);
    // Again: nothing new.
    expect(b.service.importFile({ file: second })).toEqual({ imported: 0, unchanged: 3, updated: 0 });
    expect(a.service.importFile({ file: second })).toEqual({ imported: 0, unchanged: 3, updated: 0 });
  });

  it('refuses a bad line by its number and writes nothing, not even the good lines before it', () => {
    const a = filled();
    const file = join(dir, 'a.jsonl');
    a.service.export({ file });
    const good = readFileSync(file, 'utf8').trimEnd().split('\n');
    const b = library();
    const write = (lines: string[]) => (writeFileSync(file, lines.join('\n') + '\n'), file);
    const cases: [string[], RegExp][] = [
      [[good[0]!, good[1]!, '{"skill": null, "messages": [], "source": "compare"}'], /^line 3: messages: /],
      [[good[0]!, '', 'not json'], /^line 3: not JSON/],
      [[good[0]!, good[1]!.replace('"source":"eval"', '"source":"elsewhere"')], /^line 2: source: /],
      [[good[0]!.replace('"skill_version":1', '"skill_version":null')], /^line 1: skill_version: required/],
      [
        [good[0]!.replace(/"skill_sha256":"[0-9a-f]+"/, `"skill_sha256":"${'0'.repeat(64)}"`)],
        /^line 1: skill_sha256 is not the sha256 of skill_text/,
      ],
      [[good[0]!, good[1]!, good[0]!], /^line 3: trajectory [0-9a-f]{32} is also on line 1/],
      [[good[0]!, JSON.stringify({ ...JSON.parse(good[1]!), extra: 1 })], /^line 2: Unrecognized key/i],
    ];
    for (const [lines, message] of cases) {
      const e = rejection(() => b.service.importFile({ file: write(lines) }));
      expect(e.code, lines.join('|').slice(0, 80)).toBe('invalid_input');
      expect(e.message).toMatch(message);
      expect(e.message).toMatch(/nothing was imported$/);
      expect(count(b.db)).toBe(0);
    }
    // A stored trajectory with different content under the same id: conflict, and the whole file is refused.
    b.service.importFile({ file: write([good[0]!]) });
    const changed = JSON.parse(good[0]!) as { messages: { content: string }[] };
    changed.messages[1]!.content = 'something else';
    const e = rejection(() => b.service.importFile({ file: write([good[2]!, JSON.stringify(changed)]) }));
    expect(e).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(
        /^line 2: trajectory [0-9a-f]{32} is already in the library with a different messages; nothing was imported$/,
      ),
    });
    expect(count(b.db)).toBe(1);
  });

  it('a rating in the file replaces the stored one; a line without id or created_at imports once', () => {
    const a = filled();
    const file = join(dir, 'a.jsonl');
    a.service.export({ file });
    const b = library();
    b.service.importFile({ file });
    const first = JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!) as { id: string; rating: unknown };
    first.rating = { value: 'down', note: 'wrong after all', at: '2031-01-01T00:00:00.000Z' };
    writeFileSync(file, JSON.stringify(first) + '\n');
    expect(b.service.importFile({ file })).toEqual({ imported: 0, unchanged: 0, updated: 1 });
    expect(b.service.show({ id: first.id }).rating).toEqual({
      value: 'down',
      note: 'wrong after all',
      at: '2031-01-01T00:00:00.000Z',
    });

    // The shape build_episodes.py writes to stage2.jsonl (no id, no created_at) is accepted; the id
    // comes from the line's bytes, so importing it twice adds one row.
    const minimal = JSON.stringify({
      skill: 'gamma',
      skill_text: '# Gamma\n',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ],
      source: 'synth',
      skill_version: 1,
    });
    writeFileSync(file, minimal + '\n');
    expect(b.service.importFile({ file })).toEqual({ imported: 1, unchanged: 0, updated: 0 });
    expect(b.service.importFile({ file })).toEqual({ imported: 0, unchanged: 1, updated: 0 });
  });

  it('--stage2 keeps only successes with a skill and an assistant turn last', () => {
    const a = filled();
    a.service.record([run({ verdict: { passed: false, test: 't1' } })]); // failed
    const [down] = a.service.record([run({ verdict: { passed: true, test: 't1' } })]);
    a.service.rate({ id: down!.id, rating: 'down' }); // passed, but the user said no
    a.service.record([run({ verdict: { passed: true }, messages: [{ role: 'user', content: 'no answer' }] })]);
    const rows = [...a.service.lines({ stage2: true })].map(
      (l) => JSON.parse(l) as { source: string; rating: unknown; verdict: unknown },
    );
    expect(rows.map((r) => [r.source, r.rating !== null, r.verdict !== null])).toEqual([
      ['compare', true, false], // rated up
      ['eval', false, true], // passed
    ]);
  });

  it('refuses an export over a folder and an import of a missing or non-UTF-8 file', () => {
    const { service } = library();
    expect(rejection(() => service.export({ file: dir })).message).toMatch(/is a folder/);
    expect(rejection(() => service.importFile({ file: join(dir, 'missing.jsonl') })).code).toBe('not_found');
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, Buffer.from([0x7b, 0xff, 0x7d, 0x0a]));
    expect(rejection(() => service.importFile({ file: bad })).message).toMatch(/not UTF-8/);
  });
});
