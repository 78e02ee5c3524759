// bench/v1-stall: does the web host stay responsive while /v1 serves skill models on a large library?
// A library of SKILLS skills (~6 KiB each, one import), the web host with its /v1 routes, then CONCURRENT
// chat completions at once, each for a different skill model (`base:NAME@1`: the first use compiles its
// adapter). Meanwhile `app.info` is asked over HTTP every 50 ms; its latencies are the figure
// (docs/security.md "A frozen server": ≤ 100 ms throughout), with the event loop's own delay beside them.
// Run: node --import tsx bench/v1-stall.ts [--skills N] [--concurrent N] [--max-tokens N]
// Writes bench/results/v1-stall.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { studioContract } from '../common/api/contract';
import { createStudio } from '../main/api/root';
import { directClient } from '../main/api/transports/direct';
import { startWebHost } from '../main/api/transports/web-host';
import { APP_ROOT } from '../main/paths';

const { values } = parseArgs({
  options: {
    skills: { type: 'string', default: '10000' },
    concurrent: { type: 'string', default: '20' },
    'max-tokens': { type: 'string', default: '16' },
  },
});
const SKILLS = Number(values.skills);
const CONCURRENT = Number(values.concurrent);
const MAX_TOKENS = Number(values['max-tokens']);
const TARGET_MS = 100;

const skillText = (i: number) =>
  `---\nname: lib-${i}\ndescription: Check release ${i} before it ships.\n---\n\n# Release check ${i}\n\n` +
  Array.from({ length: 72 }, (_, k) => `${k + 1}. Confirm that step ${k} of release ${i} has an owner.\n`).join('');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'pskills-bench-v1-'));
  try {
    for (let i = 0; i < SKILLS; i++) {
      mkdirSync(join(work, 'src', `s${i}`), { recursive: true });
      writeFileSync(join(work, 'src', `s${i}`, 'SKILL.md'), skillText(i));
    }
    const studio = createStudio({ dataDir: join(work, 'data') });
    const api = directClient(studioContract, studio.dispatcher);
    const imported = (await api.import.run({ source: join(work, 'src') }, () => {}).result).imported;
    const host = await startWebHost({ dispatcher: studio.dispatcher, staticDir: null, routes: studio.routes });
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${host.token}` };
    await api.engine.info({}); // the bundle loads before the clock starts, as on a running studio
    await fetch(`${host.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ model: 'base', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }),
    });

    // The poller runs in its own thread, as a browser would: a stalled studio loop cannot delay its clock.
    const poller = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
      const latencies = []; let polling = true;
      parentPort.on('message', () => { polling = false; });
      (async () => {
        while (polling) {
          const t = performance.now();
          const r = await fetch(workerData.url, { method: 'POST', headers: workerData.headers, body: '{}' });
          await r.json();
          latencies.push(performance.now() - t);
          await new Promise((res) => setTimeout(res, 50));
        }
        parentPort.postMessage(latencies);
      })();`,
      { eval: true, workerData: { url: `${host.origin}/api/call/app.info`, headers: auth } },
    );
    const done = new Promise<number[]>((res) => poller.once('message', res));
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const t0 = performance.now();
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, async (_, j) => {
        const r = await fetch(`${host.origin}/v1/chat/completions`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({
            model: `base:lib-${j * Math.floor(SKILLS / CONCURRENT)}@1`,
            messages: [{ role: 'user', content: 'Is release 3 ready?' }],
            max_tokens: MAX_TOKENS,
          }),
        });
        return r.status;
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    lag.disable();
    poller.postMessage('stop');
    const latencies = await done;
    await poller.terminate();
    await host.close();
    await studio.dispose();

    const ok = answers.filter((s) => s === 200).length;
    const result = {
      skills: SKILLS,
      imported,
      concurrent: CONCURRENT,
      max_tokens: MAX_TOKENS,
      answered_200: ok,
      seconds,
      app_info_ms: {
        n: latencies.length,
        p50: pct(latencies, 50),
        p99: pct(latencies, 99),
        max: Math.max(...latencies),
      },
      event_loop_ms: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
      target_ms: TARGET_MS,
      load_average: loadavg(),
    };
    console.log(
      `skills ${imported}, ${CONCURRENT} concurrent /v1 skill-model requests: ${ok} answered in ${seconds.toFixed(1)} s`,
    );
    console.log('| figure | p50 ms | p99 ms | max ms |');
    console.log('| --- | ---: | ---: | ---: |');
    const a = result.app_info_ms;
    console.log(
      `| app.info over HTTP (${a.n} calls) | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${a.max.toFixed(1)} |`,
    );
    console.log(
      `| event loop delay | | ${result.event_loop_ms.p99.toFixed(1)} | ${result.event_loop_ms.max.toFixed(1)} |`,
    );
    console.log(
      `target: app.info ≤ ${TARGET_MS} ms throughout; load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
    writeFileSync(join(APP_ROOT, 'bench/results/v1-stall.json'), JSON.stringify(result, null, 2) + '\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main();
