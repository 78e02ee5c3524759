// Request bodies of the OpenAI-compatible endpoint, as far as we honour them.
import { z } from 'zod';
import { MAX_NEW_TOKENS, Seed } from '../../../common/api/engine-schemas';

const Content = z.union([
  z.string(),
  // The array form, text parts only.
  z
    .array(z.object({ type: z.literal('text'), text: z.string() }))
    .transform((parts) => parts.map((p) => p.text).join('')),
]);

export const ChatCompletionRequest = z.object({
  model: z.string().min(1).max(300),
  messages: z
    .array(
      z.object({
        role: z.enum(['system', 'developer', 'user', 'assistant']),
        content: Content,
        name: z.string().optional(),
      }),
    )
    .min(1)
    .max(500),
  max_tokens: z.number().int().min(1).max(MAX_NEW_TOKENS).nullish(),
  max_completion_tokens: z.number().int().min(1).max(MAX_NEW_TOKENS).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(), // not OpenAI's, but common in local servers
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  repetition_penalty: z.number().min(0.5).max(3).nullish(),
  seed: Seed.nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
  n: z.literal(1).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  user: z.string().optional(),
  /** true: keep this completion as a trajectory (when the studio keeps trajectories; docs/api.md). */
  store: z.boolean().nullish(),
  /** OpenAI's string pairs (≤ 16, keys ≤ 64, values ≤ 512 characters); kept with a stored trajectory. */
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys')
    .nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

export interface OpenAiError {
  status: number;
  message: string;
  type: 'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'server_error';
  code: string | null;
  param: string | null;
}

export const openAiBody = (e: OpenAiError) => ({
  error: { message: e.message, type: e.type, param: e.param, code: e.code },
});
