// `pskills import`: SKILL.md files from an npm package, a folder or a .tgz into the library.
import { resolve } from 'node:path';
import type { Command } from './command';
import { usageError } from './usage';

export const importCommand: Command = {
  name: 'import',
  usage: '<npm-spec|dir|file.tgz>',
  summary: 'import SKILL.md files into the library',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    const source = positionals[0];
    if (!source || positionals.length > 1) throw usageError(importCommand);
    // A path that exists locally is passed absolute, so the store records where it came from.
    const isPath = source.startsWith('.') || source.startsWith('/') || source.endsWith('.tgz');
    const result = await withStudio(values, (api) => {
      const handle = api.import.run({ source: isPath ? resolve(source) : source }, (p) => {
        if (!values.json && p.skipped) io.err(`skip ${p.skipped.path}: ${p.skipped.reason}`);
      });
      return handle.result;
    });
    if (values.json)
      io.out(JSON.stringify({ imported: result.imported, unchanged: result.unchanged, skipped: result.skipped }));
    else io.out(`imported ${result.imported}, unchanged ${result.unchanged}, skipped ${result.skipped.length}`);
  },
};
