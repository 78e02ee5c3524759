// `pskills skills list`, `skills show` and `skills create`: the library from the shell.
import type { Command } from './command';
import { usageError } from './usage';

export const skillsList: Command = {
  name: 'skills list',
  usage: '[--query Q] [--package P]',
  summary: "the library's skills, filtered by text or package",
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, { query: { type: 'string' }, package: { type: 'string' } });
    if (positionals.length) throw usageError(skillsList);
    const input: { query?: string; package?: string } = {};
    if (values.query !== undefined) input.query = values.query;
    if (values.package !== undefined) input.package = values.package;
    const rows = await withStudio(values, (api) => api.skills.list(input));
    if (values.json) {
      io.out(
        JSON.stringify(
          rows.map((r) => ({ name: r.name, description: r.description, package: r.package, versions: r.versions })),
        ),
      );
    } else {
      for (const r of rows)
        io.out(`${r.name}\t${r.package ?? '-'}\tv${r.latestVersion}\t${r.description.slice(0, 80)}`);
    }
  },
};

export const skillsShow: Command = {
  name: 'skills show',
  usage: '<name>[@<n>]',
  summary: 'a skill: its text, parse diagnostics and version history',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length !== 1) throw usageError(skillsShow);
    const d = await withStudio(values, (api) => api.skills.get(flags.skillRef(positionals[0]!)));
    if (values.json) io.out(JSON.stringify(d));
    else {
      io.out(`${d.name} v${d.version.version} (${d.history.length} versions) ${d.package ?? ''}`.trim());
      io.out(d.description);
      for (const diag of d.parsed.diagnostics) io.out(`  ${diag.severity} line ${diag.line}: ${diag.message}`);
      io.out('');
      io.out(d.content);
    }
  },
};

export const skillsCreate: Command = {
  name: 'skills create',
  usage: '<name>',
  summary: 'a new skill: version 1 from the SKILL.md template, to edit and save',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length !== 1) throw usageError(skillsCreate);
    const d = await withStudio(values, (api) => api.skills.create({ name: positionals[0]! }));
    if (values.json) io.out(JSON.stringify({ name: d.name, version: d.version.version, content: d.content }));
    else {
      io.out(
        `created ${d.name} v${d.version.version} from the template; replace its description and fill in the sections`,
      );
      io.out('');
      io.out(d.content);
    }
  },
};
