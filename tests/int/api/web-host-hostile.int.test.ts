// Hostile traffic against `pskills serve` as a real child process: bad
// cookies and bad WebSocket frames close that request or socket only; the server keeps answering.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let dataDir: string;
let child: ChildProcess;
let origin: string;
let token: string;
let stderr = '';

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-hostile-'));
  child = spawn(process.execPath, [BIN, 'serve', '--json', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  const url = new URL((JSON.parse(line) as { url: string }).url);
  origin = url.origin;
  token = new URLSearchParams(url.hash.slice(1)).get('token')!;
});
afterAll(() => {
  child.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const call = (headers: Record<string, string>) =>
  fetch(`${origin}/api/call/app.info`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{}',
  });

/** The server process is up and answers an authorized call. */
async function stillServes(): Promise<void> {
  expect(child.exitCode, stderr).toBeNull();
  const res = await call({ authorization: `Bearer ${token}` });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ ok: true });
}

const wsUrl = () => `${origin.replace('http', 'ws')}/api/stream`;

function openSocket(headers: Record<string, string> = { authorization: `Bearer ${token}` }): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(), { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Fails the test instead of hanging it when the server went away. */
const within = <T>(p: Promise<T>, what: string, ms = 15_000): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
  ]);

/** One round trip on an open socket: a malformed message is answered with an error envelope. */
function echo(ws: WebSocket): Promise<unknown> {
  const reply = new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(String(data)))));
  ws.send(JSON.stringify({ t: 'start', id: 'ping' }));
  return within(reply, 'reply');
}

const closed = (ws: WebSocket) =>
  within(new Promise<number>((resolve) => ws.once('close', (code) => resolve(code))), 'close');

describe('malformed cookies (defect 2)', () => {
  it('are ignored over HTTP: the Bearer header next to them still authorizes, none gives 401', async () => {
    for (const bad of ['other_app=100%', 'x=%ZZ', '=%', 'a=%E0%A4%A']) {
      expect((await call({ cookie: bad, authorization: `Bearer ${token}` })).status, bad).toBe(200);
      expect((await call({ cookie: bad })).status, bad).toBe(401);
    }
    await stillServes();
  });

  it('do not kill the server on a WebSocket upgrade, which is answered', async () => {
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(wsUrl(), { headers: { cookie: 'x=%ZZ' } });
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('error', () => resolve(-1));
    });
    expect(status).toBe(401);
    const ws = await openSocket({ cookie: 'x=%ZZ', authorization: `Bearer ${token}` });
    expect(await echo(ws)).toMatchObject({ t: 'err', id: 'ping' });
    ws.close();
    await stillServes();
  });
});

describe('WebSocket errors close that socket only (defect 3)', () => {
  it('a message over the 2 MiB limit is closed with 1009; another socket keeps working', async () => {
    const other = await openSocket();
    const ws = await openSocket();
    const code = closed(ws);
    ws.send(Buffer.alloc(2 * 1024 * 1024 + 1, 0x20));
    expect(await code).toBe(1009);
    expect(await echo(other)).toMatchObject({ t: 'err', id: 'ping' });
    other.close();
    await stillServes();
  });

  it('the ~2.3 MB Playground message (control characters JSON escapes six-fold)', async () => {
    const ws = await openSocket();
    const noise = '\u0001'.repeat(190_000);
    const msg = JSON.stringify({
      t: 'start',
      id: 's1',
      method: 'engine.generate',
      input: {
        messages: [
          { role: 'system', content: noise },
          { role: 'user', content: noise },
        ],
      },
    });
    expect(msg.length).toBeGreaterThan(2.2e6);
    const code = closed(ws);
    ws.send(msg);
    expect(await code).toBe(1009);
    await stillServes();
  });

  it('a frame with a reserved opcode, written raw after the upgrade', async () => {
    const { port } = new URL(origin);
    const sock = connect(Number(port), '127.0.0.1');
    const head = await new Promise<string>((resolve, reject) => {
      sock.once('error', reject);
      sock.once('data', (d) => resolve(d.toString()));
      sock.write(
        `GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      );
    });
    expect(head).toMatch(/^HTTP\/1\.1 101/);
    const ended = new Promise<void>((resolve) => sock.once('close', () => resolve()));
    sock.write(Buffer.from([0x83, 0x80, 1, 2, 3, 4])); // FIN + opcode 3 (reserved), masked, empty
    await within(ended, 'close');
    await stillServes();
  });
});
