// Fixture builders for store tests: a valid NewVersion with only the interesting fields overridden.
import { createHash } from 'node:crypto';
import type { Provenance } from '../../../common/api/skill-schemas';
import type { NewVersion } from '../../../main/store/types';

export function hashOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function skillText(name: string, description: string, body = `# ${name}\n\nDo the thing.\n`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;
}

export function npmProvenance(pkg: string, path = 'skills/x/SKILL.md'): Provenance {
  return { kind: 'npm', package: pkg, version: '1.0.0', license: 'MIT', integrity: null, path };
}

export function newVersion(over: Partial<NewVersion> & { name: string }): NewVersion {
  const description = over.description ?? `About ${over.name}`;
  const content = over.content ?? skillText(over.name, description);
  const pkg = over.package === undefined ? 'pkg-a' : over.package;
  return {
    description,
    content,
    bodyHash: hashOf(`body:${content}`),
    package: pkg,
    provenance: pkg === null ? { kind: 'manual' } : npmProvenance(pkg),
    ...over,
  };
}
