import { describe, expect, it } from 'vitest';
import { checkFeeds, type FeedError, type TensorSpec } from '../../../main/engine/feed-check';

const specs: TensorSpec[] = [
  { name: 'input_ids', type: 'int64', dims: ['batch', 'sequence_length'] },
  { name: 'lora.0.q.A', type: 'float32', dims: ['batch', 64, 'lora_rank'] },
  { name: 'lora.0.q.B', type: 'float32', dims: ['batch', 'lora_rank', 64] },
];
const good = () => ({
  input_ids: { type: 'int64', dims: [2, 5] },
  'lora.0.q.A': { type: 'float32', dims: [2, 64, 4] },
  'lora.0.q.B': { type: 'float32', dims: [2, 4, 64] },
});
const failure = (feeds: Record<string, { type: string; dims: number[] }>) => {
  try {
    checkFeeds(specs, feeds);
  } catch (err) {
    return err as FeedError;
  }
  throw new Error('no error');
};

describe('checkFeeds', () => {
  it('accepts feeds that fit, with any size of a symbolic dimension (rank 0 too)', () => {
    expect(() => checkFeeds(specs, good())).not.toThrow();
    expect(() =>
      checkFeeds(specs, {
        ...good(),
        'lora.0.q.A': { type: 'float32', dims: [2, 64, 0] },
        'lora.0.q.B': { type: 'float32', dims: [2, 0, 64] },
      }),
    ).not.toThrow();
  });

  it('names a missing input with what the graph wants', () => {
    const { input_ids: _, ...rest } = good();
    const err = failure(rest);
    expect(err.input).toBe('input_ids');
    expect(err.message).toBe("input 'input_ids' is missing (graph wants int64 [batch, sequence_length])");
  });

  it('names an unexpected feed', () => {
    expect(failure({ ...good(), 'lora.9.q.A': { type: 'float32', dims: [1] } }).message).toBe(
      "feed 'lora.9.q.A' is not an input of this graph",
    );
  });

  it('names dtype, rank and fixed-dimension mismatches', () => {
    expect(failure({ ...good(), input_ids: { type: 'int32', dims: [2, 5] } }).message).toBe(
      "input 'input_ids': dtype int32, the graph wants int64",
    );
    expect(failure({ ...good(), input_ids: { type: 'int64', dims: [10] } }).message).toMatch(
      /input 'input_ids': rank 1 \[10\], the graph wants rank 2/,
    );
    expect(failure({ ...good(), 'lora.0.q.B': { type: 'float32', dims: [2, 4, 32] } }).message).toBe(
      "input 'lora.0.q.B' dimension 2: 32, the graph wants 64 [batch, lora_rank, 64]",
    );
  });

  it('catches a symbolic dimension that differs between inputs', () => {
    const err = failure({ ...good(), 'lora.0.q.B': { type: 'float32', dims: [2, 3, 64] } });
    expect(err.message).toBe("input 'lora.0.q.B' dimension 1 (lora_rank): 3, but 'lora.0.q.A' gave lora_rank = 4");
    expect(failure({ ...good(), 'lora.0.q.A': { type: 'float32', dims: [1, 64, 4] } }).message).toMatch(
      /dimension 0 \(batch\): 1, but 'input_ids' gave batch = 2/,
    );
  });

  it('lists every feed with dtype and dims for the log', () => {
    expect(failure({ ...good(), input_ids: { type: 'int32', dims: [2, 5] } }).feeds).toEqual([
      'input_ids: int32 [2, 5]',
      'lora.0.q.A: float32 [2, 64, 4]',
      'lora.0.q.B: float32 [2, 4, 64]',
    ]);
  });
});
