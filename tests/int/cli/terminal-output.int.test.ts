// What `pskills` prints cannot drive the terminal: names with control or bidi
// characters are not imported, and every other text it prints (descriptions, SKILL.md bodies, skip
// reasons, paths) reaches stdout/stderr with those characters escaped. --json keeps the exact data.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forTerminal } from '../../../main/cli/terminal';
import { ENGLISH_BODY } from '../../fixtures/skills/skill-md';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const RAW = /(?![\t\n])[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const DESCRIPTION = '\u001b]0;pwned\u0007\u001b[2J Clears the screen \u202Egnp.exe';
let dataDir: string;
let src: string;

const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

function skill(folder: string, frontmatter: string, body = ENGLISH_BODY): void {
  mkdirSync(join(src, folder));
  writeFileSync(join(src, folder, 'SKILL.md'), `---\n${frontmatter}\n---\n\n${body}`);
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-term-'));
  src = mkdtempSync(join(tmpdir(), 'pskills-term-src-'));
  // YAML double-quoted escapes: the file is plain ASCII, the parsed value has the raw characters.
  skill(
    'noisy',
    'name: noisy\ndescription: "\\e]0;pwned\\a\\e[2J Clears the screen \\u202Egnp.exe"',
    `${ENGLISH_BODY}\nBell \u0007 and \u001b[31mred\u001b[0m in the body.\n`,
  );
  skill(
    'red-name',
    'name: "\\e[31mred"\ndescription: A name that paints the terminal red.',
    ENGLISH_BODY.replace('pull request', 'merge request'),
  );
  skill(
    'long-name',
    `name: ${'n'.repeat(5000)}\ndescription: A name of five thousand characters.`,
    ENGLISH_BODY.replace('diff', 'patch'),
  );
  skill(
    'x\u001b[31m',
    'description: No name, and a folder name with an escape sequence.',
    ENGLISH_BODY.replace('merged', 'landed'),
  );
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(src, { recursive: true, force: true });
});

describe('pskills terminal output', () => {
  it('forTerminal escapes controls and bidi characters, keeps tabs, newlines and text', () => {
    expect(forTerminal('a\tb\nc')).toBe('a\tb\nc');
    expect(forTerminal('\u001b[2J\r\u0000\u007f\u009b\u202e\u2066é漢')).toBe(
      '\\u001b[2J\\u000d\\u0000\\u007f\\u009b\\u202e\\u2066é漢',
    );
    const json = JSON.stringify({ d: DESCRIPTION });
    expect(JSON.parse(forTerminal(json))).toEqual({ d: DESCRIPTION }); // still the same JSON
  });

  it('import skips the hostile names, and its report is escaped', () => {
    const r = pskills('import', src);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/imported 1, unchanged 0, skipped 3/);
    expect(r.err).not.toMatch(RAW);
    expect(r.err).toMatch(/red-name\/SKILL\.md: .*name has the control character U\+001B/);
    expect(r.err).toMatch(/long-name\/SKILL\.md: .*5,000 characters \(at most 128\)/);
    expect(r.err).toMatch(/x\\u001b\[31m\/SKILL\.md: .*folder name.*U\+001B/);
  });

  it('skills list and show print the description and body escaped', () => {
    const list = pskills('skills', 'list');
    expect(list.code).toBe(0);
    expect(list.out).not.toMatch(RAW);
    expect(list.out).toContain('\\u001b]0;pwned\\u0007\\u001b[2J Clears the screen \\u202egnp.exe');
    const show = pskills('skills', 'show', 'noisy');
    expect(show.code).toBe(0);
    expect(show.out).not.toMatch(RAW);
    expect(show.out).toContain('Bell \\u0007 and \\u001b[31mred');
  });

  it('--json still carries the exact text', () => {
    const list = pskills('skills', 'list', '--json');
    expect(list.out).not.toMatch(RAW);
    expect((JSON.parse(list.out) as { description: string }[])[0]!.description).toBe(DESCRIPTION);
  });

  it('error messages are escaped too', () => {
    const r = pskills('fro\u001b[2Jb');
    expect(r.code).not.toBe(0);
    expect(r.err).not.toMatch(RAW);
    expect(r.err).toContain('unknown command "fro\\u001b[2Jb"');
  });
});
