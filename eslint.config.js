// Import boundaries follow docs/design.md §2: folder = where it runs.
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
  {
    files: ['main/**'],
    ignores: ['main/electron/**', 'main/engine/ort.ts'],
    rules: banned(
      ['electron', 'onnxruntime-node', '**/renderer/**', '**/preload/**'],
      'main/ never imports renderer or preload; electron only in main/electron/, onnxruntime-node only in main/engine/ort.ts.',
    ),
  },
  {
    files: ['main/electron/**'],
    rules: banned(
      ['onnxruntime-node', '**/renderer/**', '**/preload/**'],
      'main/electron/ wires windows and IPC; no renderer/preload/ORT imports.',
    ),
  },
  {
    files: ['main/engine/ort.ts'],
    rules: banned(['electron', '**/renderer/**', '**/preload/**'], 'ort.ts is Node-only.'),
  },
);
