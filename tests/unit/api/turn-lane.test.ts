// The store lane runs one job a turn: a timer (or I/O) that falls due while a job runs is served before
// the next job, where back-to-back stores would hold it until the last.
import { describe, expect, it } from 'vitest';
import { TurnLane } from '../../../main/api/services/turn-lane';

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('TurnLane', () => {
  it('lets a timer that fell due run between two jobs, and keeps the jobs in order', async () => {
    const lane = new TurnLane();
    const order: string[] = [];
    const jobs = ['a', 'b', 'c'].map((j) => lane.run(() => (busy(3), order.push(j), j)));
    setTimeout(() => order.push('timer'), 0);
    expect(await Promise.all(jobs)).toEqual(['a', 'b', 'c']);
    expect(order.indexOf('timer')).toBeGreaterThan(-1);
    expect(order.indexOf('timer')).toBeLessThan(order.indexOf('c'));
    expect(order.filter((o) => o !== 'timer')).toEqual(['a', 'b', 'c']);
  });

  it('rejects with the job error and goes on with the next', async () => {
    const lane = new TurnLane();
    const bad = lane.run(() => {
      throw new Error('disk full');
    });
    const good = lane.run(() => 2);
    await expect(bad).rejects.toThrow('disk full');
    expect(await good).toBe(2);
  });
});
