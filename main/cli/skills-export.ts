// `pskills skills export`: every stored version of every skill, with its text and where it came
// from. The training corpus is built from this output (training/…/data/studio_skills.py), so the
// studio's importer is the only one: the corpus holds exactly what an import into the studio keeps.
import type { StudioApi } from '../../common/api/contract';
import type { Provenance, SkillDetail } from '../../common/api/skill-schemas';
import { bodyHash } from '../skills/normalize';
import type { Command } from './command';
import { usageError } from './usage';

/** One exported version: a JSON line of `--jsonl`, an element of `--json`. */
export interface ExportedSkill {
  name: string;
  version: number; // the skill's version number in the library (1, 2, …)
  package: string | null; // the npm package (or the .tgz's package.json name) the version came from
  packageVersion: string | null;
  path: string | null; // SKILL.md inside the package or folder; null for a version saved by hand
  /** The frontmatter's licence, else the package's. */
  license: string | null;
  description: string;
  sha256: string; // of `content`
  bodyHash: string; // normalized body: what duplicate detection compares (normalize.ts)
  provenance: Provenance;
  content: string;
}

export const skillsExport: Command = {
  name: 'skills export',
  usage: '[--jsonl] [--package P]',
  summary: 'every version of every skill with its text and provenance (--jsonl: one JSON object a line)',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {
      jsonl: { type: 'boolean', default: false },
      package: { type: 'string' },
    });
    if (positionals.length || (values.json && values.jsonl)) throw usageError(skillsExport);
    const rows = await withStudio(values, (api) => exportSkills(api, values.package));
    if (values.jsonl) for (const r of rows) io.out(JSON.stringify(r));
    else if (values.json) io.out(JSON.stringify(rows));
    else
      for (const r of rows)
        io.out(
          `${r.name}\tv${r.version}\t${r.package ?? '-'}${r.packageVersion ? `@${r.packageVersion}` : ''}\t${r.path ?? '-'}`,
        );
  },
};

/** Skills by name, each one's versions oldest first; `pkg` keeps the versions that came from that package. */
export async function exportSkills(api: StudioApi, pkg?: string): Promise<ExportedSkill[]> {
  const out: ExportedSkill[] = [];
  for (const summary of await api.skills.list({})) {
    const latest = await api.skills.get({ name: summary.name });
    const numbers = latest.history.map((h) => h.version).sort((a, b) => a - b);
    for (const n of numbers) {
      const d = n === latest.version.version ? latest : await api.skills.get({ name: summary.name, version: n });
      const row = exported(d);
      if (pkg === undefined || row.package === pkg) out.push(row);
    }
  }
  return out;
}

function exported(d: SkillDetail): ExportedSkill {
  const p = d.version.provenance;
  const fromPackage = p.kind === 'npm' || p.kind === 'tgz' ? p : null;
  return {
    name: d.name,
    version: d.version.version,
    package: fromPackage?.package ?? null,
    packageVersion: fromPackage?.version ?? null,
    path: 'path' in p ? p.path : null,
    license: d.parsed.frontmatter.license || fromPackage?.license || null, // '' is no licence, as in the importer's check
    description: d.description,
    sha256: d.version.sha256,
    bodyHash: bodyHash(d.parsed),
    provenance: p,
    content: d.content,
  };
}
