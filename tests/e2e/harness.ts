// What the browser tests need around the page: a fresh renderer build, the studio's web host as a
// child process on a throwaway data folder, and Chromium driven by playwright-core.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import WebSocket from 'ws';

export const ROOT = resolve(import.meta.dirname, '../..');
export const SCREENSHOTS = join(ROOT, 'docs/screenshots');
const RENDERER_OUT = join(ROOT, 'out/renderer/index.html');
const CHROMIUM = process.env.PSKILLS_CHROMIUM ?? '/usr/bin/chromium';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds with electron-vite unless out/renderer is newer than every renderer/ and common/ file. */
export function ensureRendererBuilt(): void {
  const built = existsSync(RENDERER_OUT) ? statSync(RENDERER_OUT).mtimeMs : 0;
  const sources = Math.max(newestMtime(join(ROOT, 'renderer')), newestMtime(join(ROOT, 'common')));
  if (built > sources) return;
  const r = spawnSync('npx', ['electron-vite', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`electron-vite build failed with status ${r.status}`);
}

export interface Host {
  /** The address the host printed, with #token=… */
  url: string;
  origin: string;
  dataDir: string;
  /** Ends the host; the data folder is removed unless `keepData` (to start another on it). */
  stop(keepData?: boolean): Promise<void>;
}

/** `pskills serve --port 0` on a temp data folder (`prepare` may fill it first); resolves once it
 * prints its address. `on` names a data folder and port instead (a restart of an earlier host), and
 * the host's environment (a temp HOME). */
export async function startHost(
  prepare?: (dataDir: string) => void,
  on: { dataDir?: string; port?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<Host> {
  const dataDir = on.dataDir ?? mkdtempSync(join(tmpdir(), 'pskills-e2e-'));
  prepare?.(dataDir);
  const child: ChildProcess = spawn(
    process.execPath,
    ['bin/pskills.mjs', 'serve', '--data-dir', dataDir, '--port', String(on.port ?? 0)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...(on.env ? { env: on.env } : {}) },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`pskills serve printed no address in 60 s\n${stderr}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /studio: (http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(stdout);
      if (m?.[1]) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pskills serve exited with ${code}\n${stderr}`));
    });
  });
  return {
    url,
    origin: new URL(url).origin,
    dataDir,
    async stop(keepData = false) {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** Every console error, uncaught exception and failed request of a page, for the final check. */
export function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()} (${msg.location().url})`);
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('requestfailed', (req) => {
    const why = req.failure()?.errorText ?? '';
    // the page's own cancel (AbortController) or a navigation dropping a request in flight: not a failure
    if (why === 'net::ERR_ABORTED') return;
    problems.push(`requestfailed: ${req.url()} ${why}`);
  });
  return problems;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

export interface Studio {
  host: Host;
  browser: Browser;
  /** One page, 1360×840, 20 s default timeout, not yet navigated: `page.goto(host.url)` opens the studio. */
  page: Page;
  /** What collectProblems gathers on `page`. */
  problems: string[];
  close(): Promise<void>;
}

/** The setup every spec shares: a fresh build, a host on a temp data folder, Chromium and a page. */
export async function openStudio(
  prepare?: (dataDir: string) => void,
  opts: { env?: NodeJS.ProcessEnv } = {},
): Promise<Studio> {
  ensureRendererBuilt();
  const host = await startHost(prepare, opts.env ? { env: opts.env } : {});
  let browser: Browser;
  try {
    browser = await launchChromium();
  } catch (err) {
    await host.stop();
    throw err;
  }
  const context = await browser.newContext({ viewport: { width: 1360, height: 840 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems = collectProblems(page);
  return {
    host,
    browser,
    page,
    problems,
    async close() {
      await browser.close();
      await host.stop();
    },
  };
}

/**
 * One StudioApi method through the host's HTTP endpoint, with the launch token as a bearer token:
 * test setup that the page under test then shows. Rejects with the API's code and message.
 */
export async function apiCall<T = unknown>(host: Host, method: string, input: unknown = {}): Promise<T> {
  const token = new URLSearchParams(new URL(host.url).hash.slice(1)).get('token') ?? '';
  const res = await fetch(`${host.origin}/api/call/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as { ok: true; value: T } | { ok: false; error: { code: string; message: string } };
  if (!body.ok) throw new Error(`${method}: ${body.error.code}: ${body.error.message}`);
  return body.value;
}

/**
 * One StudioApi stream (adapters.merge, adapters.distill) through the host's WebSocket, run to its end:
 * test setup, as apiCall is for methods. Rejects with the API's code and message.
 */
export async function apiStream<T = unknown>(host: Host, method: string, input: unknown = {}): Promise<T> {
  const token = new URLSearchParams(new URL(host.url).hash.slice(1)).get('token') ?? '';
  const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/api/stream`, {
    headers: { authorization: `Bearer ${token}`, origin: host.origin },
  });
  try {
    return await new Promise<T>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send(JSON.stringify({ t: 'start', id: 's1', method, input })));
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as
          { t: 'event' } | { t: 'ok'; value: T } | { t: 'err'; error: { code: string; message: string } };
        if (msg.t === 'ok') resolve(msg.value);
        else if (msg.t === 'err') reject(new Error(`${method}: ${msg.error.code}: ${msg.error.message}`));
      });
    });
  } finally {
    ws.close();
  }
}

/** Polls a Node-side condition (locator counts, boxes, texts) until it holds. */
export async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
