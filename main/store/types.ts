// What the importer hands the store: one ready-to-write skill version.
import type { Provenance } from '../../common/api/skill-schemas';

export interface NewVersion {
  name: string;
  description: string;
  content: string; // full SKILL.md text, as imported
  bodyHash: string; // sha256 of the normalized body (see main/skills/normalize.ts): duplicate detection
  package: string | null; // npm package name when the skill came from one
  provenance: Provenance;
}
