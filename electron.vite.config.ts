import { resolve } from 'node:path';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'electron-vite';

const CHUNK_MAX = 1200 * 1024;

// main and the CLI run in Node (the web host too); the preload must be CommonJS because the
// window is sandboxed; the renderer is a plain web app served by Electron or the web host.
export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rollupOptions: {
        // worker_threads entries (main/threads.ts finds them as out/main/NAME.js): the adapter
        // algebra and the engine (compile, generate), off the main process's event loop.
        input: {
          index: resolve('main/electron/main.ts'),
          'algebra-worker': resolve('main/adapters/algebra-worker.ts'),
          'gguf-worker': resolve('main/models/gguf-worker.ts'),
          'engine-worker': resolve('main/engine/engine-worker.ts'),
        },
        external: ['better-sqlite3', 'onnxruntime-node'],
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      rollupOptions: {
        input: { index: resolve('preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'renderer',
    plugins: [svelte({ configFile: resolve('renderer/svelte.config.js') })],
    build: {
      outDir: 'out/renderer',
      minify: true,
      rollupOptions: {
        input: { index: resolve('renderer/index.html') },
        // Monaco (3.3 MB) and ECharts (630 kB) load on the pages that use them; each library is cut into
        // pieces under Vite's 500 kB warning instead of raising the limit.
        output: {
          // Cutting a library across chunks may reorder its module bodies (Monaco then failed with
          // "r is not a constructor"); this keeps them in source order.
          strictExecutionOrder: true,
          codeSplitting: {
            groups: [
              { name: 'monaco', test: /node_modules[\\/]monaco-editor/, maxSize: CHUNK_MAX, priority: 3 },
              { name: 'echarts', test: /node_modules[\\/](echarts|zrender)/, maxSize: CHUNK_MAX, priority: 2 },
              { name: 'vendor', test: /node_modules/, maxSize: CHUNK_MAX, priority: 1 },
            ],
          },
        },
      },
    },
  },
});
