// The pskills command table: USAGE, --help and usage errors come from its rows, and main/cli has no
// import cycle.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StudioError } from '../../../common/errors';
import type { Command } from '../../../main/cli/command';
import { createContext, type CliContext } from '../../../main/cli/context';
import { runCli } from '../../../main/cli/run';
import { COMMANDS } from '../../../main/cli/table';
import { commandHelp, synopsis, usageText } from '../../../main/cli/usage';

/** A context that records what is printed and fails if anything opens a studio. */
function recording(): { ctx: CliContext; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const base = createContext({ out: (l) => out.push(l), err: (l) => err.push(l), write: (t) => out.push(t) });
  const never = () => {
    throw new Error('opened a studio');
  };
  return { ctx: { ...base, openStudio: never, withStudio: never }, out, err };
}

async function rejection(p: Promise<unknown>): Promise<StudioError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(StudioError);
  return e as StudioError;
}

describe('the command table', () => {
  it('gives every command a name, usage text and a summary, and USAGE lists each', () => {
    const usage = usageText(COMMANDS);
    expect(new Set(COMMANDS.map((c) => c.name)).size).toBe(COMMANDS.length);
    for (const c of COMMANDS) {
      expect(c.name, c.name).toMatch(/^[a-z][a-z-]*( [a-z][a-z-]*)?$/);
      expect(c.name).not.toBe('help');
      expect(typeof c.usage, c.name).toBe('string');
      expect(c.usage, c.name).toBe(c.usage.trim());
      expect(c.summary.trim(), c.name).not.toBe('');
      expect(synopsis(c).startsWith(c.name)).toBe(true);
      expect(usage, c.name).toContain(`\n  ${synopsis(c)}`);
      expect(usage, c.name).toContain(c.summary);
    }
  });

  it('has no one-word command that is also a group', () => {
    const groups = new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]));
    for (const c of COMMANDS) if (!c.name.includes(' ')) expect(groups.has(c.name), c.name).toBe(false);
  });

  it("--help, -h and `help <command>` print the command's generated usage and exit 0", async () => {
    for (const c of COMMANDS) {
      for (const argv of [
        [...c.name.split(' '), '--help'],
        [...c.name.split(' '), 'x', '-h'],
        ['help', ...c.name.split(' ')],
      ]) {
        const { ctx, out, err } = recording();
        expect(await runCli(argv, ctx), argv.join(' ')).toBe(0);
        expect(out, argv.join(' ')).toEqual([commandHelp(c)]);
        expect(out[0]).toContain(`usage: pskills ${synopsis(c)}\n  ${c.summary}`);
        expect(err).toEqual([]);
      }
    }
  });

  it('prints USAGE for no command (exit 2) and for help (exit 0)', async () => {
    for (const [argv, code] of [
      [[], 2],
      [['help'], 0],
      [['--help'], 0],
      [['-h'], 0],
      [['help', '--json'], 0],
    ] as const) {
      const { ctx, out } = recording();
      expect(await runCli([...argv], ctx), argv.join(' ')).toBe(code);
      expect(out).toEqual([usageText(COMMANDS)]);
    }
  });

  it('answers an unknown command with the generated USAGE and an invalid_input error', async () => {
    for (const argv of [['frobnicate'], ['help', 'frobnicate'], ['--bogus']]) {
      const { ctx, out } = recording();
      const e = await rejection(runCli(argv, ctx));
      expect(e.code).toBe('invalid_input');
      expect(e.message).toBe(`unknown command "${argv.at(-1)}"`);
      expect(out).toEqual([usageText(COMMANDS)]);
    }
  });

  it('a group without a known subcommand names its subcommands; with --help it lists them', async () => {
    const { ctx, out } = recording();
    expect((await rejection(runCli(['ema'], ctx))).message).toBe('usage: pskills ema update|history|rollback …');
    expect((await rejection(runCli(['skills', 'bogus'], ctx))).message).toBe(
      'usage: pskills skills list|show|create|export …',
    );
    expect((await rejection(runCli(['skillworld'], ctx))).message).toMatch(
      /^usage: pskills skillworld generate --split/,
    );
    expect(await runCli(['adapters', '--help'], ctx)).toBe(0);
    for (const c of COMMANDS.filter((x) => x.name.startsWith('adapters ')))
      expect(out.join('\n')).toContain(synopsis(c));
  });

  it('a command that refuses its arguments throws its generated usage line', async () => {
    const { ctx } = recording();
    for (const [argv, name] of [
      [['compile'], 'compile'],
      [['skills', 'show'], 'skills show'],
      [['adapters', 'export', 'a', 'b'], 'adapters export'],
    ] as const) {
      const c = COMMANDS.find((x) => x.name === name)!;
      const e = await rejection(runCli([...argv], ctx));
      expect(e.code).toBe('invalid_input');
      expect(e.message).toBe(`usage: pskills ${synopsis(c)}`);
    }
  });

  it('one new row is one new command, with its help and its exit status', async () => {
    const ran: string[][] = [];
    const extra: Command = {
      name: 'skills frob',
      usage: '<x>',
      summary: 'frobs a skill',
      run: async (argv) => (ran.push(argv), 3),
    };
    const table = [...COMMANDS, extra];
    const { ctx, out } = recording();
    expect(await runCli(['skills', 'frob', 'a'], ctx, table)).toBe(3);
    expect(ran).toEqual([['a']]);
    expect(await runCli(['help'], ctx, table)).toBe(0);
    expect(out.at(-1)).toContain('  skills frob <x>');
    // a group's commands stay together in USAGE wherever the row is added
    const lines = out
      .at(-1)!
      .split('\n')
      .filter((l) => l.startsWith('  skills '));
    expect(lines.map((l) => l.trim().split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'skills list',
      'skills show',
      'skills create',
      'skills export',
      'skills frob',
    ]);
    expect((await rejection(runCli(['skills'], ctx, table))).message).toBe(
      'usage: pskills skills list|show|create|export|frob …',
    );
  });
});

describe('main/cli imports', () => {
  it('has no import cycle (type-only imports included)', () => {
    const dir = join(process.cwd(), 'main', 'cli');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    const edges = new Map(
      files.map((f) => {
        const src = readFileSync(join(dir, f), 'utf8');
        const local = [...src.matchAll(/^(?:import|export)[^'"]*from '\.\/([^']+)'/gm)].map((m) => `${m[1]}.ts`);
        return [f, local.filter((t) => files.includes(t))];
      }),
    );
    const state = new Map<string, 'open' | 'done'>();
    const visit = (f: string, path: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') throw new Error(`import cycle: ${[...path, f].join(' → ')}`);
      state.set(f, 'open');
      for (const t of edges.get(f)!) visit(t, [...path, f]);
      state.set(f, 'done');
    };
    expect(edges.get('table.ts')!.length).toBeGreaterThan(5); // the scan sees imports
    for (const f of files) visit(f, []);
  });
});
