// The pskills commands. Each prints JSON with --json, a short table otherwise.
import { resolve } from 'node:path';
import { studioContract, type StudioApi } from '../../common/api/contract';
import { StudioError } from '../../common/errors';
import { createStudio, type Studio } from '../api/root';
import { directClient } from '../api/transports/direct';
import { startWebHost } from '../api/transports/web-host';
import { defaultDataDir, RENDERER_DIR } from '../paths';
import { ADAPTERS_USAGE } from './adapters';
import { parse, parseSkillRef } from './args';

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

function open(dataDir: string | undefined): { studio: Studio; api: StudioApi } {
  const studio = createStudio({ dataDir: dataDir ? resolve(dataDir) : defaultDataDir() });
  return { studio, api: directClient(studioContract, studio.dispatcher) };
}

const usage = (text: string) => new StudioError('invalid_input', text);

export const USAGE = `usage: pskills <command> [--data-dir DIR] [--json]
  import <npm-spec|dir|file.tgz>     import SKILL.md files into the library
  skills list [--query Q] [--package P]
  skills show <name>[@<n>]
  generate [--bundle DIR] --prompt TEXT [--adapter DIR] [--max-tokens N] [--raw]
  compile <name>[@<n>] [--bundle DIR]   skill → adapter through the bundle's hypernetwork (cached)
  compare <name>[@<n>] --prompt TEXT [--max-tokens N] [--bundle DIR]
                                     none / in_context / parametric / wrong_skill side by side
  eval (--skills DIR | --suite skillworld [--n N]) --out FILE.json [--bundle DIR]
                                     the evaluation tables (training/.venv)
  skillworld generate --split train|val|test --n N --out DIR [--seed S] [--filler DIR]
                                     checkable generated skills and tasks (docs/skillworld.md)
${ADAPTERS_USAGE}
  serve [--port P]                   run the studio on 127.0.0.1 and print its address`;

export async function runImport(argv: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(argv, {});
  const source = positionals[0];
  if (!source || positionals.length > 1) throw usage('usage: pskills import <npm-spec|dir|file.tgz>');
  // A path that exists locally is passed absolute, so the store records where it came from.
  const { studio, api } = open(values['data-dir']);
  try {
    const isPath = source.startsWith('.') || source.startsWith('/') || source.endsWith('.tgz');
    const handle = api.import.run({ source: isPath ? resolve(source) : source }, (p) => {
      if (!values.json && p.skipped) io.err(`skip ${p.skipped.path}: ${p.skipped.reason}`);
    });
    const result = await handle.result;
    if (values.json) io.out(JSON.stringify({ imported: result.imported, unchanged: result.unchanged, skipped: result.skipped }));
    else io.out(`imported ${result.imported}, unchanged ${result.unchanged}, skipped ${result.skipped.length}`);
  } finally {
    await studio.dispose();
  }
}

export async function runSkills(argv: string[], io: Io): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'list') {
    const { values, positionals } = parse(rest, { query: { type: 'string' }, package: { type: 'string' } });
    if (positionals.length) throw usage('usage: pskills skills list [--query Q] [--package P]');
    const { studio, api } = open(values['data-dir']);
    try {
      const input: { query?: string; package?: string } = {};
      if (values.query !== undefined) input.query = values.query;
      if (values.package !== undefined) input.package = values.package;
      const rows = await api.skills.list(input);
      if (values.json) {
        io.out(JSON.stringify(rows.map((r) => ({ name: r.name, description: r.description, package: r.package, versions: r.versions }))));
      } else {
        for (const r of rows) io.out(`${r.name}\t${r.package ?? '-'}\tv${r.latestVersion}\t${r.description.slice(0, 80)}`);
      }
    } finally {
      await studio.dispose();
    }
    return;
  }
  if (sub === 'show') {
    const { values, positionals } = parse(rest, {});
    if (positionals.length !== 1) throw usage('usage: pskills skills show <name>[@<n>]');
    const { studio, api } = open(values['data-dir']);
    try {
      const d = await api.skills.get(parseSkillRef(positionals[0]!));
      if (values.json) io.out(JSON.stringify(d));
      else {
        io.out(`${d.name} v${d.version.version} (${d.history.length} versions) ${d.package ?? ''}`.trim());
        io.out(d.description);
        for (const diag of d.parsed.diagnostics) io.out(`  ${diag.severity} line ${diag.line}: ${diag.message}`);
        io.out('');
        io.out(d.content);
      }
    } finally {
      await studio.dispose();
    }
    return;
  }
  throw usage('usage: pskills skills list|show …');
}

export async function runServe(argv: string[], io: Io): Promise<{ close(): Promise<void> }> {
  const { values, positionals } = parse(argv, { port: { type: 'string', default: '0' } });
  if (positionals.length) throw usage('usage: pskills serve [--port P]');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`bad --port "${values.port}"`);
  const { studio } = open(values['data-dir']);
  const host = await startWebHost({ dispatcher: studio.dispatcher, staticDir: RENDERER_DIR, port, routes: studio.routes });
  if (values.json) io.out(JSON.stringify({ url: host.url, port: host.port }));
  else io.out(`studio: ${host.url}`);
  return {
    close: async () => {
      await host.close();
      await studio.dispose();
    },
  };
}
