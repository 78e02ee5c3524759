// The import-boundary rules of eslint.config.js, checked on small virtual files.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const [res] = await eslint.lintText(code, { filePath });
  return (res?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import boundaries', () => {
  const cases: Array<[string, string, boolean]> = [
    ['renderer/src/x.ts', "import { createStudio } from '../../main/api/root';", false],
    ['renderer/src/x.ts', "import { readFileSync } from 'node:fs';", false],
    ['renderer/src/x.ts', "import { ipcRenderer } from 'electron';", false],
    ['renderer/src/x.ts', "import { studioContract } from '../../common/api/contract';", true],
    ['preload/x.ts', "import { openDatabase } from '../main/store/db';", false],
    ['preload/x.ts', "import { ipcMain } from 'electron';", false],
    ['preload/x.ts', "import { contextBridge, ipcRenderer } from 'electron';", true],
    ['preload/x.ts', "import { studioContract } from '../common/api/contract';", true],
    ['common/x.ts', "import { readFileSync } from 'node:fs';", false],
    ['common/x.ts', "import { x } from '../main/paths';", false],
    ['common/x.ts', "import { z } from 'zod';", true],
    ['main/store/x.ts', "import { app } from 'electron';", false],
    ['main/store/x.ts', "import * as ort from 'onnxruntime-node';", false],
    ['main/store/x.ts', "import { x } from '../../renderer/src/lib/bridge';", false],
    ['main/electron/x.ts', "import { app } from 'electron';", true],
    ['main/engine/ort.ts', "import * as ort from 'onnxruntime-node';", true],
  ];
  it.each(cases)('%s: %s → allowed=%s', async (file, code, allowed) => {
    const errors = await boundaryErrors(file, `${code}\nexport {};\n`);
    expect(errors.length === 0).toBe(allowed);
  });
});
