// What every source (folder, .tgz, npm) hands the importer.
import type { Provenance, SkipRecord } from '../../../common/api/skill-schemas';
import type { ImportLimits } from './file-checks';

type WithoutPath<T> = T extends unknown ? Omit<T, 'path'> : never;
/** Provenance minus the SKILL.md path, which each candidate adds. */
export type ProvenanceBase = WithoutPath<Exclude<Provenance, { kind: 'manual' }>>;

export interface Candidate {
  relPath: string; // '/'-separated path of SKILL.md inside the source root
  folderName: string; // the folder holding SKILL.md: the skill's default name
  content: string;
  provenanceBase: ProvenanceBase;
}

export interface SourceScan {
  candidates: Candidate[];
  skipped: SkipRecord[];
}

export interface ScanOptions {
  signal?: AbortSignal;
  onSkip?: (skip: SkipRecord) => void;
  /** done/total in the source's own unit (directories walked, bytes read). */
  onProgress?: (done: number, total: number) => void;
  /** Caps on entries and held bytes; IMPORT_LIMITS when absent. */
  limits?: ImportLimits;
}

export function withPath(base: ProvenanceBase, path: string): Provenance {
  return { ...base, path } as Provenance;
}

export function isSkillFile(name: string): boolean {
  return name.toLowerCase() === 'skill.md';
}

/** 'skills/foo/SKILL.md' → 'foo'; null for a SKILL.md at the root. */
export function folderOf(relPath: string): string | null {
  const parts = relPath.split('/');
  return parts.length > 1 ? (parts[parts.length - 2] ?? null) : null;
}
