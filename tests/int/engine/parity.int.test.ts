// TS engine vs the PyTorch / Python-tokenizers / jinja2 oracle (CONVENTIONS 10).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  engineAdapter,
  generate,
  generateAll,
  loadBundle,
  type Bundle,
  type EngineAdapter,
} from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import { FIXTURE_DIR, fixtureAdapter, maxAbsDiff, oracle } from './fixture';

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(FIXTURE_DIR);
});
afterAll(() => bundle.dispose());

const adapterOf = (name: string | null) => (name === null || name === 'none' ? null : fixtureAdapter(name));

async function promptForward(ids: number[], adapter: string) {
  return bundle.lm.forward(
    {
      batch: 1,
      inputIds: ids,
      positionIds: ids.map((_, i) => i),
      attentionMask: ids.map(() => 1),
      cache: KvCache.empty(bundle.manifest, 1),
      lora: bundle.lm.loraFeeds([adapterOf(adapter)]),
    },
    { hidden: true },
  );
}

async function promptLogits(ids: number[], adapter: string) {
  const { logits } = await promptForward(ids, adapter);
  const V = bundle.lm.vocab;
  return (position: number) => logits.subarray(position * V, (position + 1) * V);
}

describe('tokenizer and chat template equal Python', () => {
  it.each(oracle.tokenizer.map((t) => [JSON.stringify(t.text).slice(0, 40), t] as const))('ids of %s', (_, t) => {
    expect(bundle.tokenizer.encode(t.text)).toEqual(t.ids);
    expect(bundle.tokenizer.decode(t.ids)).toBe(t.decoded);
  });

  it.each(oracle.chat.map((c, i) => [i, c] as const))('chat %i renders as jinja2 does', (_, c) => {
    expect(bundle.chat.render(c.messages, { addGenerationPrompt: c.add_generation_prompt })).toBe(c.rendered);
  });
});

describe.each(oracle.prompts.map((p) => [p.name, p] as const))('prompt "%s" equals PyTorch', (_, p) => {
  it.each(['none', 'r4'] as const)('logits with adapter %s within the tolerance', async (adapter) => {
    const run = p.runs[adapter];
    const at = await promptLogits(p.ids, adapter);
    run.logit_positions.forEach((pos, n) => expect(maxAbsDiff(at(pos), run.logits[n]!)).toBeLessThan(oracle.tolerance));
  });

  it.each(['none', 'r4'] as const)('encoder hidden states with adapter %s', async (adapter) => {
    const { hidden } = await promptForward(p.ids, adapter);
    const d = bundle.manifest.architecture.hidden;
    expect(hidden!.length).toBe(p.ids.length * d);
    expect(maxAbsDiff(hidden!.subarray(hidden!.length - d), p.runs[adapter].hidden_last)).toBeLessThan(
      oracle.tolerance,
    );
  });

  it.each(['none', 'r4'] as const)('32 greedy tokens with adapter %s', async (adapter) => {
    const [res] = await generateAll(bundle, [
      { prompt: p.ids, adapter: adapterOf(adapter), maxNewTokens: 32, stopTokenIds: [] },
    ]);
    expect(res!.tokens).toEqual(p.runs[adapter].greedy);
    expect(bundle.tokenizer.decode(res!.tokens)).toBe(p.runs[adapter].greedy_text);
    expect(res!.finishReason).toBe('length');
  });

  it('the adapter changes the output', () => {
    expect(p.runs.r4.greedy).not.toEqual(p.runs.none.greedy);
  });
});

describe('a left-padded batch with a different adapter per row', () => {
  const requests = () =>
    oracle.batch.rows.map((r) => ({
      prompt: r.ids,
      adapter: adapterOf(r.adapter),
      maxNewTokens: 32,
      stopTokenIds: [],
    }));

  it('the prompts differ in length and the rows in rank (0, 4, 2)', () => {
    expect(new Set(requests().map((r) => r.prompt.length)).size).toBe(3);
    expect(requests().map((r) => r.adapter?.rank ?? 0)).toEqual([0, 4, 2]);
  });

  it('gives PyTorch batch greedy tokens, and the same as each row alone', async () => {
    const batched = await generateAll(bundle, requests());
    expect(batched.map((r) => r.tokens)).toEqual(oracle.batch.greedy);
    const alone = [];
    for (const req of requests()) alone.push(...(await generateAll(bundle, [req])));
    expect(alone.map((r) => r.tokens)).toEqual(batched.map((r) => r.tokens));
    expect(alone.map((r) => r.text)).toEqual(batched.map((r) => r.text));
  });

  it('prefill logits of each row equal PyTorch and the row run alone', async () => {
    const reqs = requests();
    const width = Math.max(...reqs.map((r) => r.prompt.length));
    const V = bundle.lm.vocab;
    const step = {
      batch: reqs.length,
      inputIds: reqs.flatMap((r) => [...Array<number>(width - r.prompt.length).fill(oracle.batch.pad), ...r.prompt]),
      positionIds: reqs.flatMap((r) => [
        ...Array<number>(width - r.prompt.length).fill(0),
        ...r.prompt.map((_, i) => i),
      ]),
      attentionMask: reqs.flatMap((r) => [...Array<number>(width - r.prompt.length).fill(0), ...r.prompt.map(() => 1)]),
      cache: KvCache.empty(bundle.manifest, reqs.length),
      lora: bundle.lm.loraFeeds(reqs.map((r) => r.adapter)),
    };
    const out = await bundle.lm.forward(step);
    // what generation asks for: only the last position's logits (format 2's logits_to_keep)
    const kept = await bundle.lm.forward({ ...step, logitsToKeep: 1 });
    expect([out.logitsPerRow, kept.logitsPerRow, kept.logits.length]).toEqual([width, 1, reqs.length * V]);
    for (const [row, req] of reqs.entries()) {
      const last = out.logits.subarray(((row + 1) * width - 1) * V, (row + 1) * width * V);
      expect(kept.logits.subarray(row * V, (row + 1) * V)).toEqual(last);
      expect(maxAbsDiff(last, oracle.batch.last_logits[row]!)).toBeLessThan(oracle.tolerance);
      const alone = await promptLogits([...req.prompt], oracle.batch.rows[row]!.adapter ?? 'none');
      expect(maxAbsDiff(last, alone(req.prompt.length - 1))).toBeLessThan(oracle.tolerance);
    }
  });
});

it('streamed text deltas add up to the decoded output', async () => {
  const it = generate(bundle, { prompt: oracle.chat[0]!.rendered, maxNewTokens: 32, stopTokenIds: [] });
  let streamed = '';
  const tokens: number[] = [];
  let next = await it.next();
  for (; !next.done; next = await it.next()) {
    streamed += next.value.text;
    tokens.push(next.value.tokenId);
  }
  expect(next.value.tokens).toEqual(tokens);
  expect(streamed).toBe(next.value.text);
  expect(streamed).toBe(bundle.tokenizer.decode(tokens, { skipSpecialTokens: true }));
});

describe('switching adapters between requests (feeds cached by adapter identity)', () => {
  /** The same adapter with every array a view at an offset into a bigger, NaN-filled buffer. */
  function offsetViews(ad: EngineAdapter): EngineAdapter {
    const view = (a: Float32Array) => {
      const buf = new Float32Array(a.length + 7).fill(NaN);
      buf.set(a, 5);
      return buf.subarray(5, 5 + a.length);
    };
    return engineAdapter(ad.rank, new Map([...ad.targets].map(([k, p]) => [k, { ...p, A: view(p.A), B: view(p.B) }])));
  }

  it('r4 → none → r2 → r4 (the same objects again) each give their PyTorch greedy tokens', async () => {
    const p = oracle.prompts[0]!;
    const r4 = offsetViews(fixtureAdapter('r4'));
    const r2 = fixtureAdapter('r2');
    const alone = async (ad: EngineAdapter | null) =>
      (await generateAll(bundle, [{ prompt: p.ids, adapter: ad, maxNewTokens: 32, stopTokenIds: [] }]))[0]!.tokens;
    const first = await alone(r4);
    expect(first).toEqual(p.runs.r4.greedy);
    expect(await alone(null)).toEqual(p.runs.none.greedy);
    const withR2 = await alone(r2);
    expect(withR2).not.toEqual(first);
    expect(await alone(r4)).toEqual(first);
    expect(bundle.lm.loraFeeds([r4])).toBe(bundle.lm.loraFeeds([r4]));
  });
});
