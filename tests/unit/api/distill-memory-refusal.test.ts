// The distil service weighs the train steps' memory before anything runs (docs/distill.md "Memory before a
// run"): the plan names the estimate and the free memory, and a run that cannot fit is refused with
// invalid_input before the step is timed, the instant compile or the teacher pass. On the real tiny
// layered bundle with the machine's free memory faked.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdapterFactory } from '../../../main/api/services/adapter-factory';
import { DistillService } from '../../../main/api/services/distill-service';
import { loadBundle, type Bundle } from '../../../main/engine/bundle';
import { APP_ROOT } from '../../../main/paths';

const DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny-layered');
const SKILL =
  '---\nname: greet\ndescription: Greet.\n---\n# Greet\n\nSay tests.\n\n## Examples\n- User: hi\n- User: yo\n';

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(DIR, { verifyHashes: false });
});
afterAll(async () => bundle.dispose());

function service(free: number, calls: string[]): DistillService {
  const skill = { name: 'greet', description: 'Answer a greeting.', content: SKILL, version: { version: 1 }, rowId: 1 };
  const bundles = { current: async () => ({ bundle, rowId: 1 }) as never };
  return new DistillService({
    factory: new AdapterFactory({
      skills: { get: () => skill as never, versionRowId: () => 1 },
      repo: {} as never,
      bundles,
      cache: { put: () => undefined, get: () => null as never },
    }),
    compiler: {
      compileAdapter: async () => {
        calls.push('compile');
        throw new Error('not here');
      },
    },
    tests: { get: () => ({ tests: [] }) as never },
    repo: { list: () => [] } as never,
    bundles,
    engine: {
      distill: async () => {
        calls.push('distill');
        throw new Error('not here');
      },
      timeStep: async () => {
        calls.push('time');
        return 0.01;
      },
      distillMany: async () => {
        throw new Error('not here');
      },
    },
    writer: null,
    freeMemory: () => free,
  });
}

describe('distil: memory before a run', () => {
  it('the plan carries the estimate and the free memory when the run fits', async () => {
    const calls: string[] = [];
    const plan = await service(2 ** 40, calls).plan({ name: 'greet' });
    expect(plan.available).toBe(true);
    expect(plan.estimate!.memoryBytes).toBeGreaterThan(0);
    expect(plan.estimate!.freeMemoryBytes).toBe(2 ** 40);
    expect(calls).toEqual(['time']);
  });

  it('does not fit: the plan says why and times nothing; a run is refused before any work', async () => {
    const calls: string[] = [];
    const svc = service(2 ** 20, calls);
    const plan = await svc.plan({ name: 'greet' });
    expect(plan.available).toBe(false);
    expect(plan.estimate).toBeNull();
    expect(plan.reason).toMatch(
      /^this distillation needs about \d+\.\d GiB of memory \(.*weights .*\) and this machine has 0\.0 GiB free/,
    );
    const ctl = new AbortController();
    await expect(
      svc.run({ skill: { name: 'greet' } }, { emit: () => undefined, signal: ctl.signal }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/needs about .* and this machine has 0\.0 GiB free; nothing was started/),
    });
    expect(calls).toEqual([]);
  });
});
