import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { method, stream } from '../../../common/api/define';
import { StudioError } from '../../../common/errors';
import { Dispatcher } from '../../../main/api/dispatcher';
import { memoryPair } from './memory-pair';

const contract = {
  math: {
    add: method(z.object({ a: z.number(), b: z.number() }).strict(), z.object({ sum: z.number() })),
    fail: method(z.object({}), z.object({})),
    broken: method(z.object({}), z.object({ n: z.number() })),
  },
  jobs: {
    count: stream(
      z.object({ to: z.number().int().max(100) }),
      z.object({ i: z.number() }),
      z.object({ total: z.number() }),
    ),
    wait: stream(z.object({}), z.object({ tick: z.number() }), z.object({ done: z.boolean() })),
  },
} as const;

function setup() {
  const add = vi.fn(({ a, b }: { a: number; b: number }) => ({ sum: a + b }));
  const aborted = vi.fn();
  const dispatcher = new Dispatcher(contract, {
    math: {
      add,
      fail: () => {
        throw new StudioError('conflict', 'nope', { why: 'test' });
      },
      broken: () => ({ n: 'not a number' }) as unknown as { n: number },
    },
    jobs: {
      count: async ({ to }, { emit }) => {
        for (let i = 1; i <= to; i++) emit({ i });
        return { total: to };
      },
      wait: (_input, { emit, signal }) =>
        new Promise((resolve) => {
          emit({ tick: 1 });
          signal.addEventListener('abort', () => {
            aborted();
            resolve({ done: false });
          });
        }),
    },
  });
  const { api, close } = memoryPair(contract, dispatcher);
  return { api, close, add, aborted };
}

describe('dispatcher through the in-memory transport pair', () => {
  it('round-trips a method', async () => {
    const { api } = setup();
    await expect(api.math.add({ a: 2, b: 3 })).resolves.toEqual({ sum: 5 });
  });

  it('rejects a malformed payload before the service is called', async () => {
    const { api, add } = setup();
    const err = await api.math.add({ a: 'two', b: 3 } as unknown as { a: number; b: number }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StudioError);
    expect((err as StudioError).code).toBe('invalid_input');
    expect((err as StudioError).message).toContain('"a"');
    expect(add).not.toHaveBeenCalled();
    const extra = await api.math
      .add({ a: 1, b: 2, c: 3 } as unknown as { a: number; b: number })
      .catch((e: unknown) => e);
    expect((extra as StudioError).code).toBe('invalid_input');
    expect(add).not.toHaveBeenCalled();
  });

  it('carries the error envelope {code, message, details}', async () => {
    const { api } = setup();
    const err = (await api.math.fail({}).catch((e: unknown) => e)) as StudioError;
    expect(err.toEnvelope()).toEqual({ code: 'conflict', message: 'nope', details: { why: 'test' } });
  });

  it('refuses a handler output that breaks the contract', async () => {
    const { api } = setup();
    const err = (await api.math.broken({}).catch((e: unknown) => e)) as StudioError;
    expect(err.code).toBe('internal');
  });

  it('delivers stream events in order, then the result', async () => {
    const { api } = setup();
    const seen: number[] = [];
    const h = api.jobs.count({ to: 5 }, (e) => seen.push(e.i));
    await expect(h.result).resolves.toEqual({ total: 5 });
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  it('validates stream input', async () => {
    const { api } = setup();
    const err = (await api.jobs.count({ to: 1000 }).result.catch((e: unknown) => e)) as StudioError;
    expect(err.code).toBe('invalid_input');
  });

  it('cancels a running stream: the handler sees abort, the caller gets "cancelled"', async () => {
    const { api, aborted } = setup();
    const ticks: number[] = [];
    const h = api.jobs.wait({}, (e) => ticks.push(e.tick));
    await vi.waitFor(() => expect(ticks).toEqual([1]));
    h.cancel();
    const err = (await h.result.catch((e: unknown) => e)) as StudioError;
    expect(err.code).toBe('cancelled');
    expect(aborted).toHaveBeenCalledOnce();
  });

  it('closing the connection aborts what it started', async () => {
    const { api, close, aborted } = setup();
    const ticks: number[] = [];
    api.jobs.wait({}, (e) => ticks.push(e.tick)).result.catch(() => {});
    await vi.waitFor(() => expect(ticks).toEqual([1]));
    close();
    expect(aborted).toHaveBeenCalledOnce();
  });

  it('answers unknown methods with not_found', async () => {
    const { close } = setup();
    close();
    const d = new Dispatcher(contract, {
      math: { add: () => ({ sum: 0 }), fail: () => ({}), broken: () => ({ n: 1 }) },
      jobs: { count: async () => ({ total: 0 }), wait: async () => ({ done: true }) },
    });
    await expect(d.call('math.nope', {})).rejects.toMatchObject({ code: 'not_found' });
    await expect(d.call('jobs.count', {})).rejects.toMatchObject({ code: 'not_found' });
  });
});
