// The two imports the crash test runs: a committed base batch, then a large batch that touches
// every base skill (half unchanged, half changed) and adds thousands of new ones.
import { createHash } from 'node:crypto';
import type { NewVersion } from '../../../main/store/types';

export const BASE = 200;
export const BULK = 20_000;

const filler = 'Check the input, run the step, read the output, and write down what changed. '.repeat(12);

function version(name: string, revision: number): NewVersion {
  const description = `Skill ${name}, revision ${revision}`;
  const body = `# ${name}\n\n## Steps\n${filler}\n`;
  return {
    name,
    description,
    content: `---\nname: ${name}\ndescription: ${description}\n---\n${body}`,
    bodyHash: createHash('sha256').update(`${name}:${revision}`).digest('hex'),
    package: 'crash-fixture',
    provenance: {
      kind: 'npm',
      package: 'crash-fixture',
      version: `1.0.${revision}`,
      license: 'MIT',
      integrity: null,
      path: `skills/${name}/SKILL.md`,
    },
  };
}

export function baseBatch(): NewVersion[] {
  return Array.from({ length: BASE }, (_, i) => version(`base-${i}`, 1));
}

export function bulkBatch(): NewVersion[] {
  const touched = Array.from({ length: BASE }, (_, i) => version(`base-${i}`, i % 2 === 0 ? 1 : 2));
  const fresh = Array.from({ length: BULK - BASE }, (_, i) => version(`bulk-${i}`, 1));
  return [...touched, ...fresh];
}
