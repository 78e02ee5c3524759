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
    ['main/engine/ort.ts', "import { x } from '../store/db';", false],
    // main/'s rooms import one way: a room imports the rooms before it, never those after.
    ['main/store/x.ts', "import { createStudio } from '../api/root';", false],
    ['main/store/x.ts', "import type { Adapter } from '../adapters/types';", true],
    ['main/skills/sources/x.ts', "import { RUNS_DIR } from '../../continual/run';", false],
    ['main/continual/x.ts', "import type { X } from '../api/services/compare-service';", false],
    ['main/continual/x.ts', "import { parseSkillMd } from '../skills/parse';", true],
    ['main/models/x.ts', "import { run } from '../cli/index';", false],
    ['main/files/x.ts', "import { parseManifest } from '../engine/manifest';", false],
    ['main/x.ts', "import { openDatabase } from './store/db';", false],
    ['main/api/x.ts', "import { studioContract } from '../../common/api/contract';", true],
    ['main/api/services/x.ts', "import { main } from '../../electron/main';", false],
    ['main/cli/x.ts', "import { createStudio } from '../api/root';", true],
    ['main/electron/x.ts', "import { createStudio } from '../api/root';", true],
  ];
  it.each(cases)('%s: %s → allowed=%s', async (file, code, allowed) => {
    const errors = await boundaryErrors(file, `${code}\nexport {};\n`);
    expect(errors.length === 0).toBe(allowed);
  });
});
