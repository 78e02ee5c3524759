// DTOs for the engine: bundle info, generation requests, streamed tokens and results.
import { z } from 'zod';

export const ChatMessage = z.object({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string().max(200_000),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

export const Sampling = z
  .object({
    temperature: z.number().min(0).max(5).optional(), // 0 = greedy
    topK: z.number().int().min(0).max(10_000).optional(),
    topP: z.number().gt(0).max(1).optional(),
    repetitionPenalty: z.number().min(0.5).max(3).optional(),
    seed: z.number().int().min(0).max(2 ** 31 - 1).optional(),
  })
  .strict();
export type Sampling = z.infer<typeof Sampling>;

export const MAX_NEW_TOKENS = 4096;

export const GenerateInput = z
  .object({
    /** Chat messages, rendered with the bundle's chat template; or a raw prompt. */
    messages: z.array(ChatMessage).min(1).max(500).optional(),
    prompt: z.string().min(1).max(400_000).optional(),
    maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
    stop: z.array(z.string().min(1).max(200)).max(8).optional(),
    sampling: Sampling.optional(),
  })
  .strict()
  .refine((v) => (v.messages === undefined) !== (v.prompt === undefined), {
    message: 'give exactly one of "messages" or "prompt"',
  });
export type GenerateInput = z.infer<typeof GenerateInput>;

export const TokenDelta = z.object({ tokenId: z.number().int(), text: z.string() });
export type TokenDelta = z.infer<typeof TokenDelta>;

export const GenerateResult = z.object({
  text: z.string(),
  finishReason: z.enum(['eos', 'stop', 'length', 'cancelled']),
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  ttftMs: z.number().nonnegative(),
  ms: z.number().nonnegative(),
  tokensPerSecond: z.number().nonnegative(),
});
export type GenerateResult = z.infer<typeof GenerateResult>;

export const EngineInfo = z.object({
  loaded: z.boolean(),
  dir: z.string().nullable(),
  id: z.string().nullable(),
  format: z.string().nullable(),
  architecture: z
    .object({
      family: z.string(),
      hidden: z.number().int(),
      layers: z.number().int(),
      heads: z.number().int(),
      kvHeads: z.number().int(),
      vocab: z.number().int(),
      maxPositions: z.number().int(),
    })
    .nullable(),
  loraTargets: z.array(z.string()),
  loadMs: z.number().nullable(),
  hasHypernet: z.boolean(),
  trainingCard: z.unknown().optional(),
});
export type EngineInfo = z.infer<typeof EngineInfo>;
