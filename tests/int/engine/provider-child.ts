// Run by providers.int.test.ts in a child process, because the Vulkan device WebGPU finds is chosen by
// the environment the process starts with: loads a bundle on PROVIDER, prints its provider info and the
// last-position logits of the fixture's first prompt without an adapter and with adapter r4, as JSON.
import { loadBundle } from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import type { Provider } from '../../../main/engine/ort';
import { fixtureAdapter, oracle } from './fixture';

const [dir, provider] = process.argv.slice(2) as [string, Provider];
const logs: string[] = [];
const bundle = await loadBundle(dir, { provider, logger: (m) => logs.push(m) });
const ids = oracle.prompts[0]!.ids;
const vocab = bundle.manifest.architecture.vocab;
const last: Record<string, number[]> = {};
for (const [name, adapter] of [
  ['none', null],
  ['r4', fixtureAdapter('r4')],
] as const) {
  const { logits } = await bundle.lm.forward({
    batch: 1,
    inputIds: ids,
    positionIds: ids.map((_, i) => i),
    attentionMask: ids.map(() => 1),
    cache: KvCache.empty(bundle.manifest, 1),
    lora: bundle.lm.loraFeeds([adapter]),
  });
  last[name] = [...logits.subarray((ids.length - 1) * vocab, ids.length * vocab)];
}
process.stdout.write(JSON.stringify({ provider: bundle.provider, logs, last }) + '\n');
await bundle.dispose();
