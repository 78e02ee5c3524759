// llama.cpp (node-llama-cpp's prebuilt CPU binary, never built here) for the checks against the
// runtime people use: greedy tokens from raw token ids, and the NLL of given answer tokens, with or
// without a GGUF LoRA. `loadLlamaCpp` answers why not instead of throwing when the binary cannot load
// on this machine. Also used by bench/real-model.ts.
import type * as NodeLlamaCpp from 'node-llama-cpp';
import type { Llama, LlamaModel } from 'node-llama-cpp';

export type LlamaCpp = { llama: Llama; model: LlamaModel };

export async function loadLlamaCpp(modelPath: string, threads = 1): Promise<LlamaCpp | { why: string }> {
  let mod: typeof NodeLlamaCpp;
  try {
    mod = await import('node-llama-cpp');
  } catch (err) {
    return { why: `node-llama-cpp is not installed (${(err as Error).message.split('\n')[0]})` };
  }
  let llama: Llama;
  try {
    llama = await mod.getLlama({ gpu: false, build: 'never', logLevel: mod.LlamaLogLevel.error });
  } catch (err) {
    return { why: `the prebuilt llama.cpp binary cannot load here: ${(err as Error).message.split('\n')[0]}` };
  }
  const model = await llama.loadModel({ modelPath, defaultContextFlashAttention: false });
  void threads;
  return { llama, model };
}

/** Greedy `n` tokens after `prompt` (token ids, no BOS added), with the LoRA at `scale` if given; an
 *  end-of-generation token does not stop it (as the engine with no stop tokens). */
export async function greedy(
  cpp: LlamaCpp,
  prompt: readonly number[],
  n: number,
  lora?: { filePath: string; scale: number },
  threads = 1,
): Promise<number[]> {
  const ctx = await cpp.model.createContext({
    contextSize: 256,
    threads,
    ...(lora && { lora: { adapters: [lora] } }),
  });
  try {
    const seq = ctx.getSequence();
    const out: number[] = [];
    for await (const t of seq.evaluate(prompt as never, { temperature: 0, yieldEogToken: true })) {
      out.push(t);
      if (out.length >= n) break;
    }
    return out;
  } finally {
    await ctx.dispose();
  }
}

/**
 * Teacher-forced scores of `answer` after `prefix` (token ids, no BOS added), with the LoRA if given: per
 * answer token its NLL (nats) and llama.cpp's own top token at that position. One pass over prefix +
 * answer asking for the full next-token distribution where it predicts the answer (at temperature 0 the
 * sampler chain is greedy, which leaves the softmax of the raw logits whole).
 */
export async function scoreAnswer(
  cpp: LlamaCpp,
  prefix: readonly number[],
  answer: readonly number[],
  lora?: { filePath: string; scale: number },
  threads = 1,
): Promise<{ nll: number[]; top: number[] }> {
  const ids = [...prefix, ...answer.slice(0, -1)];
  const ctx = await cpp.model.createContext({
    contextSize: Math.max(256, 64 * Math.ceil((ids.length + 1) / 64)),
    threads,
    ...(lora && { lora: { adapters: [lora] } }),
  });
  try {
    const from = prefix.length - 1;
    const input = ids.map((t, i) =>
      i >= from ? ([t, { generateNext: { probabilities: true, options: { temperature: 0 } } }] as const) : t,
    );
    const out = await ctx.getSequence().controlledEvaluate(input as never);
    const nll: number[] = [];
    const top: number[] = [];
    answer.forEach((t, j) => {
      const probs = out[from + j]?.next.probabilities;
      if (!probs) throw new Error(`llama.cpp returned no probabilities at answer position ${j}`);
      nll.push(-Math.log(Math.max(probs.get(t as never) ?? 0, Number.MIN_VALUE))); // float32: 0 only below ~1e-45
      top.push(probs.keys().next().value as number); // the map is sorted, most probable first
    });
    return { nll, top };
  } finally {
    await ctx.dispose();
  }
}
