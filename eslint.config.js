// Import boundaries follow docs/design.md §2: folder = where it runs.
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import tseslint from 'typescript-eslint';

import { mainRooms } from './scripts/main-rooms.mjs';

/** main/'s bans for the room at `i` of mainRooms: the runtimes it may not import, and every later room. */
function mainPatterns(runtime, i) {
  const patterns = [
    {
      group: [...runtime, '**/renderer/**', '**/preload/**'],
      message:
        'main/ never imports renderer or preload; electron only in main/electron/, onnxruntime-node only in main/engine/ort.ts.',
    },
  ];
  const later = mainRooms.slice(i + 1);
  // A relative import of a later room, from any depth: '../api/root', '../../cli/args', './files/x'.
  if (later.length)
    patterns.push({
      regex: `^(\\.\\.?/)+(${later.join('|')})(/|$)`,
      message: `${mainRooms[i] === '.' ? "main/'s top modules import" : `main/${mainRooms[i]}/ imports`} only the rooms before it in main/, never ${later.join(', ')}.`,
    });
  return patterns;
}

const banned = (patterns, message) => ({
  'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }] }],
});

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'training/**', 'coverage/**', '.cache/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    files: ['main/**', 'tests/**', 'bench/**', 'scripts/**', 'bin/**', '*.config.*'],
    languageOptions: { globals: globals.node },
  },
  { files: ['renderer/**'], languageOptions: { globals: globals.browser } },
  // A function over 80 lines is split where a step can be named; one that stays long says why in an
  // eslint-disable-next-line. Tests, benches and scripts are exempt (a describe block is one long function).
  {
    files: ['main/**', 'common/**', 'renderer/src/**', 'preload/**', 'bin/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['common/**'],
    rules: banned(
      ['**/main/**', '**/preload/**', '**/renderer/**', 'node:*', 'electron', 'better-sqlite3', 'onnxruntime-node'],
      'common/ is pure TypeScript shared by every runtime: no Node, Electron, DOM-only or main/renderer imports.',
    ),
  },
  {
    files: ['renderer/**'],
    rules: banned(
      ['**/main/**', '**/preload/**', 'node:*', 'electron', 'better-sqlite3', 'onnxruntime-node', 'fs', 'path'],
      'renderer/ talks to the studio only through common/ and window.studio / the web bridge.',
    ),
  },
  {
    files: ['preload/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/main/**', '**/renderer/**', 'node:*', 'better-sqlite3', 'onnxruntime-node'],
              message: 'preload/ may import common/ and electron only.',
            },
          ],
          paths: [
            {
              name: 'electron',
              importNames: ['ipcMain', 'BrowserWindow', 'app', 'shell', 'remote'],
              message: 'preload/ uses contextBridge and ipcRenderer only.',
            },
          ],
        },
      ],
    },
  },
  // main/: Node only. Electron only inside main/electron/; onnxruntime-node only in main/engine/ort.ts.
  ...mainRooms.flatMap((room, i) => {
    const only = (runtime) => ({ 'no-restricted-imports': ['error', { patterns: mainPatterns(runtime, i) }] });
    if (room === 'engine')
      return [
        { files: ['main/engine/**'], ignores: ['main/engine/ort.ts'], rules: only(['electron', 'onnxruntime-node']) },
        { files: ['main/engine/ort.ts'], rules: only(['electron']) },
      ];
    const files = [room === '.' ? 'main/*.ts' : `main/${room}/**`];
    return [{ files, rules: only(room === 'electron' ? ['onnxruntime-node'] : ['electron', 'onnxruntime-node']) }];
  }),
);
