// A prompt far over the context is refused from its byte length, before it is tokenized (a
// 3.6 MB chat request held the server for 14–22 s), and the server answers the next one.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fitSkillText } from '../../../main/skills/answer';
import { loadBundle, promptByteLimit } from '../../../main/engine';
import { failure, studioSuite, withRoutes } from '../api/transports';

const FIXTURE_BUNDLE = join(process.cwd(), 'tests', 'fixtures', 'bundle-tiny');
const BYTES_MESSAGE = /prompt is [\d,]+ bytes; at most [\d,]+ bytes can fit the context of 256 positions/;
const s = studioSuite(withRoutes(), 'pskills-prompt-bound-', { defaultBundleDir: FIXTURE_BUNDLE });

const chat = (content: string, maxTokens = 3) =>
  fetch(`${s.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'base',
      messages: [{ role: 'user', content }],
      max_tokens: maxTokens,
      temperature: 0,
    }),
  });

describe('prompt byte bound', () => {
  it('is the context times the most bytes one token stands for', async () => {
    const bundle = await loadBundle(FIXTURE_BUNDLE);
    expect(bundle.tokenizer.maxTokenBytes).toBe(13); // "<|endoftext|>"; no normalizer, so no slack
    expect(promptByteLimit(bundle)).toBe(256 * 13);
    // compare's in_context column tokenizes only the head of a huge skill, and still fits it
    const skill = 'Step one. '.repeat(100_000);
    const fit = fitSkillText(bundle, skill, 'q', 16);
    expect(fit.truncated).toBe(true);
    expect(skill.startsWith(fit.text)).toBe(true);
    expect(
      bundle.tokenizer.encode(
        bundle.chat.render([
          { role: 'system', content: fit.text },
          { role: 'user', content: 'q' },
        ]),
      ).length,
    ).toBeLessThanOrEqual(256 - 16);
    await bundle.dispose();
  });

  it('refuses a 3.6 MB chat prompt with a 400 naming bytes and context, then answers the next request', async () => {
    const res = await chat('a'.repeat(3_600_000));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(body.error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
    expect(body.error.message).toMatch(BYTES_MESSAGE);
    const ok = await chat('again');
    expect(ok.status).toBe(200);
  });

  it('refuses the same through engine.generate, for messages and for a raw prompt', async () => {
    const messages = Array.from({ length: 18 }, () => ({ role: 'user' as const, content: 'b'.repeat(200_000) }));
    const err = await failure(s.api.engine.generate({ messages }).result);
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(BYTES_MESSAGE);
    expect(err.details).toMatchObject({ max_positions: 256 });
    expect((await failure(s.api.engine.generate({ prompt: 'c'.repeat(400_000) }).result)).message).toMatch(
      BYTES_MESSAGE,
    );
    expect((await s.api.engine.generate({ prompt: 'again', maxTokens: 2 }).result).completionTokens).toBeGreaterThan(0);
  });

  it('leaves a prompt under the bound to the exact token count', async () => {
    const err = await failure(s.api.engine.generate({ prompt: 'word '.repeat(600), maxTokens: 2 }).result); // 3,000 bytes, ~600 tokens
    expect(err.message).toMatch(/prompt is \d+ tokens; the model's context is 256 positions/);
  });
});
