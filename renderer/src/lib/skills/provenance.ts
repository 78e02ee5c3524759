// How a skill version came to be, in words a person can check against the registry or disk.
import type { Provenance } from '../../../../common/api/skill-schemas';

export interface ProvenanceField {
  label: string;
  value: string;
  mono?: boolean;
  /** Long opaque values (hashes) are cut to one line; the full text is in the tooltip. */
  truncate?: boolean;
}

/** One line: "npm · pkg@1.2.3 · MIT · skills/x/SKILL.md". */
export function provenanceSummary(p: Provenance): string {
  switch (p.kind) {
    case 'npm':
      return ['npm', `${p.package}@${p.version}`, p.license ?? 'no licence', p.path].join(' · ');
    case 'tgz':
      return ['tgz', packageLabel(p.package, p.version) ?? p.file, p.license ?? 'no licence', p.path].join(' · ');
    case 'folder':
      return ['folder', joinPath(p.root, p.path)].join(' · ');
    case 'manual':
      return 'manual edit';
    case 'template':
      return 'new skill · studio template';
    case 'lesson':
      return ['lesson', `episode ${p.episode}`, p.world, p.summariser].join(' · ');
    case 'evolve':
      return ['evolve', `run ${p.run}`, `from v${p.from}`, `score ${p.score.toFixed(3)}`].join(' · ');
  }
}

export function provenanceFields(p: Provenance): ProvenanceField[] {
  switch (p.kind) {
    case 'npm':
      return [
        { label: 'Source', value: 'npm registry' },
        { label: 'Package', value: `${p.package}@${p.version}`, mono: true },
        { label: 'Licence', value: p.license ?? 'none declared' },
        { label: 'Path', value: p.path, mono: true },
        ...(p.integrity ? [{ label: 'Integrity', value: p.integrity, mono: true, truncate: true }] : []),
      ];
    case 'tgz':
      return [
        { label: 'Source', value: 'package tarball' },
        { label: 'File', value: p.file, mono: true },
        ...(p.package
          ? [{ label: 'Package', value: packageLabel(p.package, p.version) ?? p.package, mono: true }]
          : []),
        { label: 'Licence', value: p.license ?? 'none declared' },
        { label: 'Path', value: p.path, mono: true },
      ];
    case 'folder':
      return [
        { label: 'Source', value: 'folder' },
        { label: 'Folder', value: p.root, mono: true },
        { label: 'Path', value: p.path, mono: true },
      ];
    case 'manual':
      return [{ label: 'Source', value: 'edited in the studio' }];
    case 'template':
      return [
        { label: 'Source', value: 'written in the studio' },
        { label: 'From', value: 'the New skill template' },
      ];
    case 'lesson':
      return [
        { label: 'Source', value: 'continual lesson' },
        { label: 'Run', value: p.run, mono: true },
        { label: 'Episode', value: String(p.episode) },
        { label: 'World', value: p.world, mono: true },
        { label: 'Summariser', value: p.summariser },
        { label: 'Trajectories', value: String(p.trajectories.length) },
        ...(p.adoptedFrom
          ? [{ label: 'Adopted from', value: `${p.adoptedFrom} in the run's workspace`, mono: true }]
          : []),
      ];
    case 'evolve':
      return [
        { label: 'Source', value: 'evolve run' },
        { label: 'Run', value: p.run, mono: true },
        { label: 'Evolved from', value: `v${p.from}` },
        { label: 'Candidate', value: String(p.candidate) },
        { label: 'Score', value: p.score.toFixed(3) },
      ];
  }
}

/** The folder that holds SKILL.md, which the Agent Skills spec says should match the name. */
export function skillFolderName(p: Provenance): string | undefined {
  if (!('path' in p)) return undefined;
  const parts = p.path.split(/[\\/]/).filter(Boolean);
  return parts.length >= 2 ? parts[parts.length - 2] : undefined;
}

function packageLabel(pkg: string | null, version: string | null): string | null {
  if (!pkg) return null;
  return version ? `${pkg}@${version}` : pkg;
}

function joinPath(root: string, path: string): string {
  return root.endsWith('/') || root.endsWith('\\') ? root + path : `${root}/${path}`;
}
