// eslint.config.js's max-lines-per-function: 80 lines in the app's code (blank lines and comments not
// counted), a long one kept only with a disable that says why; tests are exempt.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function lengthErrors(filePath: string, code: string): Promise<number> {
  const [res] = await eslint.lintText(code, { filePath });
  return (res?.messages ?? []).filter((m) => m.ruleId === 'max-lines-per-function' && m.severity === 2).length;
}

/** A function of `lines` lines in all: its header, its statements, its closing brace. */
const fn = (lines: number, before = '') =>
  `${before}export function f(): number {\n  let x = 0;\n${'  x += 1;\n'.repeat(lines - 4)}  return x;\n}\n`;

describe('function length', () => {
  it('allows 80 lines and refuses 81 in main/, common/, renderer/src/, preload/ and bin/', async () => {
    for (const file of ['main/x.ts', 'common/x.ts', 'renderer/src/x.ts', 'preload/x.ts', 'bin/x.ts']) {
      expect(await lengthErrors(file, fn(80)), file).toBe(0);
      expect(await lengthErrors(file, fn(81)), file).toBe(1);
    }
  });

  it('does not count blank lines and comments', async () => {
    const padded = fn(80).replace('  let x = 0;\n', '  let x = 0;\n\n  // why\n\n');
    expect(await lengthErrors('main/x.ts', padded)).toBe(0);
  });

  it('keeps a long function whose disable says why; tests are exempt', async () => {
    const why = '// eslint-disable-next-line max-lines-per-function -- one loop that reads top to bottom\n';
    expect(await lengthErrors('main/x.ts', fn(120, why))).toBe(0);
    expect(await lengthErrors('tests/unit/x.test.ts', fn(120))).toBe(0);
  });
});
