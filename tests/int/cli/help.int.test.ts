// Help and unknown commands as a user sees them: the generated texts on stdout, exit statuses, and
// errors still one line on stderr.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../main/cli/table';
import { commandHelp, usageText } from '../../../main/cli/usage';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('pskills help', () => {
  it('an unknown command prints USAGE and exits 2 with one line on stderr', () => {
    const r = pskills('frobnicate');
    expect(r.code).toBe(2);
    expect(r.out).toBe(`${usageText(COMMANDS)}\n`);
    expect(r.err).toBe('pskills: unknown command "frobnicate"\n');
  });

  it('`pskills help` and `pskills <command> --help` print the generated texts and exit 0', () => {
    const help = pskills('help');
    expect(help.code).toBe(0);
    expect(help.out).toBe(`${usageText(COMMANDS)}\n`);
    const compare = pskills('compare', '--help');
    expect(compare.code).toBe(0);
    expect(compare.out).toBe(`${commandHelp(COMMANDS.find((c) => c.name === 'compare')!)}\n`);
    expect(compare.err).toBe('');
  });
});
