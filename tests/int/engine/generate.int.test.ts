// Streaming, cancellation, seeded sampling and the stopping rules on the tiny fixture bundle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generate,
  generateAll,
  generateBatch,
  loadBundle,
  type Bundle,
  type GenerateRequest,
} from '../../../main/engine';
import { FIXTURE_DIR, fixtureAdapter, oracle } from './fixture';

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(FIXTURE_DIR);
});
afterAll(() => bundle.dispose());

const plain = oracle.prompts[0]!;
const greedy: GenerateRequest = { prompt: plain.ids, maxNewTokens: 32, stopTokenIds: [] };

describe('cancellation', () => {
  it('aborting stops the iterator after the current token, and the engine goes on', async () => {
    const controller = new AbortController();
    const seen: number[] = [];
    const it = generate(bundle, { ...greedy, maxNewTokens: 200 }, { signal: controller.signal });
    let next = await it.next();
    for (; !next.done; next = await it.next()) {
      seen.push(next.value.tokenId);
      if (seen.length === 3) controller.abort();
    }
    expect(seen).toEqual(plain.runs.none.greedy.slice(0, 3));
    expect(next.value.finishReason).toBe('cancelled');
    expect(next.value.tokens).toEqual(seen);
    const [again] = await generateAll(bundle, [greedy]);
    expect(again!.tokens).toEqual(plain.runs.none.greedy);
  });

  it('an already aborted signal yields nothing', async () => {
    const [res] = await generateAll(bundle, [greedy], { signal: AbortSignal.abort() });
    expect(res!.tokens).toEqual([]);
    expect(res!.finishReason).toBe('cancelled');
  });

  it('aborting a batch cancels every unfinished row', async () => {
    const controller = new AbortController();
    const it = generateBatch(bundle, [greedy, { ...greedy, maxNewTokens: 2 }], { signal: controller.signal });
    let next = await it.next();
    let events = 0;
    for (; !next.done; next = await it.next()) if (++events === 5) controller.abort();
    expect(next.value.map((r) => r.finishReason)).toEqual(['cancelled', 'length']);
    expect(next.value.map((r) => r.tokens.length)).toEqual([3, 2]);
  });

  it('leaving the loop early is fine', async () => {
    let n = 0;
    for await (const _ of generate(bundle, greedy)) if (++n === 2) break;
    expect(n).toBe(2);
    const [res] = await generateAll(bundle, [greedy]);
    expect(res!.tokens).toEqual(plain.runs.none.greedy);
  });
});

describe('seeded sampling', () => {
  const sampled = (seed: number, extra: Partial<GenerateRequest> = {}): GenerateRequest => ({
    ...greedy,
    ...extra,
    sampling: { temperature: 1.2, topK: 50, topP: 0.95, repetitionPenalty: 1.1, seed },
  });

  it('the same seed gives the same tokens; another seed, other tokens', async () => {
    const [a, b, c] = await Promise.all(
      [7, 7, 8].map(async (seed) => (await generateAll(bundle, [sampled(seed)]))[0]!.tokens),
    );
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(a).not.toEqual(plain.runs.none.greedy);
  });

  it('a row samples the same in a batch as alone', async () => {
    const rows = [
      sampled(1),
      sampled(2, { adapter: fixtureAdapter('r4') }),
      sampled(3, { prompt: oracle.prompts[1]!.ids, adapter: fixtureAdapter('r2') }),
    ];
    const batched = await generateAll(bundle, rows);
    for (const [i, row] of rows.entries())
      expect((await generateAll(bundle, [row]))[0]!.tokens).toEqual(batched[i]!.tokens);
  });

  it('rows that start alike (a long shared start, one adapter) run it once and sample as alone', async () => {
    const start = [...plain.ids, ...plain.ids, ...plain.ids].slice(0, 80);
    const rows = [
      sampled(4, { prompt: [...start, ...oracle.prompts[1]!.ids] }),
      sampled(5, { prompt: [...start, ...plain.ids.slice(0, 3)] }),
      { ...greedy, prompt: [...start, 7] },
    ];
    let calls = 0;
    const forward = bundle.lm.forward.bind(bundle.lm);
    bundle.lm.forward = (step) => {
      if (calls++ === 0) expect(step.inputIds).toHaveLength(80); // the shared start, once, one row
      return forward(step);
    };
    let batched;
    try {
      batched = await generateAll(bundle, rows);
    } finally {
      bundle.lm.forward = forward;
    }
    for (const [i, row] of rows.entries())
      expect((await generateAll(bundle, [row]))[0]!.tokens).toEqual(batched[i]!.tokens);
  });
});

describe('stopping', () => {
  it('a stop token ends the row and is its last token', async () => {
    const stopId = plain.runs.none.greedy[5]!;
    const first = plain.runs.none.greedy.indexOf(stopId);
    const [res] = await generateAll(bundle, [{ ...greedy, stopTokenIds: [stopId] }]);
    expect(res!.finishReason).toBe('eos');
    expect(res!.tokens).toEqual(plain.runs.none.greedy.slice(0, first + 1));
  });

  it('a stop string ends the row before the string, also across tokens', async () => {
    const full = (await generateAll(bundle, [greedy]))[0]!.text;
    const stop = full.slice(20, 26);
    const streamed: string[] = [];
    const it = generate(bundle, { ...greedy, stop: [stop] });
    let next = await it.next();
    for (; !next.done; next = await it.next()) streamed.push(next.value.text);
    expect(next.value.finishReason).toBe('stop');
    expect(next.value.text).toBe(full.slice(0, full.indexOf(stop)));
    expect(streamed.join('')).toBe(next.value.text);
  });

  it('maxNewTokens and the context end a row with "length"', async () => {
    const [short] = await generateAll(bundle, [{ ...greedy, maxNewTokens: 4 }]);
    expect(short!.tokens).toEqual(plain.runs.none.greedy.slice(0, 4));
    expect(short!.finishReason).toBe('length');
    const max = bundle.manifest.architecture.max_positions;
    const [full] = await generateAll(bundle, [
      { prompt: Array<number>(max - 6).fill(40), maxNewTokens: 100, stopTokenIds: [] },
    ]);
    expect(full!.finishReason).toBe('length');
    expect(full!.promptTokens + full!.tokens.length).toBe(max + 1); // the last token is chosen but never fed back
  });

  it("by default the bundle's stop tokens end a row", async () => {
    const row = oracle.batch.rows[2]!; // its greedy output contains <|endoftext|>, one of special_tokens.stop
    const want = oracle.batch.greedy[2]!;
    const end = want.findIndex((t) => bundle.manifest.special_tokens.stop.includes(t));
    expect(end).toBeGreaterThan(0);
    const [res] = await generateAll(bundle, [
      { prompt: row.ids, adapter: fixtureAdapter(row.adapter!), maxNewTokens: 32 },
    ]);
    expect(res!.finishReason).toBe('eos');
    expect(res!.tokens).toEqual(want.slice(0, end + 1));
  });
});

it('chat messages render and generate', async () => {
  const prompt = bundle.chat.render(oracle.chat[0]!.messages);
  expect(prompt).toBe(oracle.chat[0]!.rendered);
  const [res] = await generateAll(bundle, [{ prompt, maxNewTokens: 32, stopTokenIds: [] }]);
  expect(res!.tokens).toEqual(oracle.prompts[1]!.runs.none.greedy);
});
