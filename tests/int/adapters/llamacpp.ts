// llama.cpp (node-llama-cpp's prebuilt CPU binary, never built here) for the checks against the
// runtime people use: greedy tokens from raw token ids, with or without a GGUF LoRA. `loadLlamaCpp`
// answers why not instead of throwing when the binary cannot load on this machine.
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

/** Greedy `n` tokens after `prompt` (token ids, no BOS added), with the LoRA at `scale` if given. */
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
    for await (const t of seq.evaluate(prompt as never, { temperature: 0 })) {
      out.push(t);
      if (out.length >= n) break;
    }
    return out;
  } finally {
    await ctx.dispose();
  }
}
