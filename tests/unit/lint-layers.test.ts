// scripts/lint-layers.mjs on planted trees: every import form keeps main/'s room order, and circles fail.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script with no type declarations
import { lintLayers } from '../../scripts/lint-layers.mjs';

const roots: string[] = [];
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'lint-layers-'));
  roots.push(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const findings = (files: Record<string, string>): string[] => lintLayers(tree(files)) as string[];

describe('lint-layers', () => {
  const api = { 'main/api/root.ts': 'export const root = 1;\n' };
  it.each([
    ["export const f = () => import('../api/root');", 'import()'],
    ["export const r = require('../api/root');", 'require()'],
    ["export { root } from '../api/root';", 'export … from'],
    ["import type { X } from '../api/root';\nexport type Y = X;", 'import'],
    ["export type T = import('../api/root').X;", 'import type()'],
  ])('a later room reached by %s fails', (code, how) => {
    const out = findings({ ...api, 'main/engine/x.ts': `${code}\n` });
    expect(out).toHaveLength(1);
    expect(out[0]).toContain(`main/engine/x.ts:1: ${how}`);
    expect(out[0]).toContain('never api');
  });

  it('an earlier room is allowed, by any form', () => {
    const out = findings({
      'main/files/gate.ts': 'export const gate = 1;\n',
      'main/engine/x.ts': "export const f = () => import('../files/gate');\nexport { gate } from '../files/gate';\n",
    });
    expect(out).toEqual([]);
  });

  it('onnxruntime-node outside ort.ts and electron outside main/electron fail, dynamic or not', () => {
    const out = findings({
      'main/store/x.ts': "export const o = () => import('onnxruntime-node');\nexport const e = require('electron');\n",
    });
    expect(out.map((f) => f.split(': ')[1])).toEqual(["import() 'onnxruntime-node'", "require() 'electron'"]);
  });

  it('a circle inside a room fails, naming its modules; types count', () => {
    const out = findings({
      'main/api/a.ts': "import type { B } from './b';\nexport type A = B;\n",
      'main/api/b.ts': "import { c } from './c';\nexport type B = typeof c;\n",
      'main/api/c.ts': "import type { A } from './a';\nexport const c: A | null = null;\n",
    });
    expect(out).toEqual(['circle of imports: main/api/a.ts → main/api/b.ts → main/api/c.ts']);
  });

  it("the repository's own main/ has no finding", () => {
    expect(lintLayers(process.cwd())).toEqual([]);
  });
});
