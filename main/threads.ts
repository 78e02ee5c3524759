// Starting worker_threads workers in every host, and what a message may transfer. From source (tsx,
// vitest) a worker is its .ts file under tsx's loader; in the electron-vite build it is
// out/main/NAME.js, a rollup input of the main build (electron.vite.config.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { APP_ROOT } from './paths';

/** The worker script NAME next to the module at `moduleUrl` (source), or out/main/NAME.js (build). */
export function workerFile(name: string, moduleUrl: string): string {
  const here = fileURLToPath(moduleUrl);
  if (!here.endsWith('.ts')) return join(APP_ROOT, 'out', 'main', `${name}.js`);
  return join(dirname(here), `${name}.ts`);
}

/** Worker code that registers tsx's ESM hooks in the worker, then imports the .ts entry (execArgv
 *  `--import tsx` does not reach worker threads on Node 20). */
function tsxBootstrap(file: string): string {
  const req = createRequire(import.meta.url);
  const pkgFile = req.resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as {
    exports: Record<string, { import: { default: string } }>;
  };
  const api = pathToFileURL(join(dirname(pkgFile), pkg.exports['./esm/api']!.import.default)).href;
  const entry = pathToFileURL(file).href;
  return `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
}

/** A .js/.mjs script as is; a .ts one through tsx. */
export function startWorker(file: string): Worker {
  return file.endsWith('.ts') ? new Worker(tsxBootstrap(file), { eval: true }) : new Worker(file);
}

/** The ArrayBuffers under `value` that typed arrays own whole (a view into a shared buffer, e.g. a
 *  pooled Buffer, is copied instead: transferring it would detach memory the caller still uses). */
export function ownedBuffers(value: unknown): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const walk = (v: unknown): void => {
    if (ArrayBuffer.isView(v)) {
      const buf = v.buffer;
      if (buf instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === buf.byteLength) out.add(buf);
    } else if (v instanceof Map) for (const x of v.values()) walk(x);
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(value);
  return [...out];
}
