// The studio's practice limit is the bundle recipe's `questions` (the eval's count), for the skill page's
// plan and merge rehearsal alike; a run records as practised only the tests its questions ask
// (docs/distill.md "Practice"). With fakes for the store and a bundle without a train-step graph (the plan
// then times nothing).
import { describe, expect, it } from 'vitest';
import { practisedTests, type PracticeQuestion } from '../../../common/distill/practice';
import { AdapterFactory } from '../../../main/api/services/adapter-factory';
import { DistillService } from '../../../main/api/services/distill-service';
import { FILE_RECIPE } from '../../../main/engine/distill-recipe';

const SKILL = `---
name: stamp
description: Stamp records at the desk.
---
# Stamp

How the desk stamps records.

## When to use

- A request mentions a record to stamp.

## Rules

- Prefix the answer with \`STAMP:\` and keep it on one line.

## Examples

Request: Stamp badge 2689 in the register.
Reply: \`STAMP: badge 2689\`

## Pitfalls

- Keep answers short: the desk reads them in a queue.
`;
const TESTS = Array.from({ length: 32 }, (_, i) => ({ id: `t${i}`, prompt: `Stamp record ${1000 + i * 7} today.` }));

function service(questions: number) {
  const skill = { name: 'stamp', description: 'Stamp.', content: SKILL, version: { version: 1 }, rowId: 1 };
  const manifest = { id: 'no-train-step', distill: { ...FILE_RECIPE, questions } };
  const bundles = { current: async () => ({ bundle: { manifest, dir: '/nowhere' }, rowId: 1 }) as never };
  return new DistillService({
    factory: new AdapterFactory({
      skills: { get: () => skill as never, versionRowId: () => 1 },
      repo: {} as never,
      bundles,
      cache: { put: () => undefined, get: () => null as never },
    }),
    compiler: { compileAdapter: async () => Promise.reject(new Error('not here')) },
    tests: { get: () => ({ tests: TESTS }) as never },
    repo: { list: () => [], bundleRecord: () => ({ manifest, path: '/nowhere' }) } as never,
    bundles,
    writer: null,
    freeMemory: () => 2 ** 40,
  });
}

describe("the studio's practice limit", () => {
  it("the plan lists the bundle recipe's questions, the person's own three quarters of them", async () => {
    for (const n of [40, 20]) {
      const plan = await service(n).plan({ name: 'stamp' });
      expect(plan.available).toBe(false); // no train-step graph: nothing timed
      expect(plan.questions).toHaveLength(n);
      const own = plan.questions.filter((q) => q.source === 'tests' || q.source === 'examples').length;
      expect(own).toBe(Math.round(n * 0.75));
      expect(plan.practice.heldOutTests).toHaveLength(8);
    }
  });

  it("merge rehearsal practises each source's skill at its bundle's limit", () => {
    const row = { key: 'k'.repeat(64), skill: { name: 'stamp', version: 1 }, bundle: { rowId: 1 } };
    const [part] = service(24).rehearsalParts([row as never]);
    expect(part!.questions).toHaveLength(24);
  });

  it('a test is practised when the questions ask it as a test', () => {
    const tests = [
      { id: 'a', prompt: 'Stamp record 1.' },
      { id: 'b', prompt: 'Stamp record 2.' },
      { id: 'c', messages: [{ role: 'user', content: 'Stamp record 3.' }] },
      { id: 'd', prompt: 'Stamp record 4.' },
    ];
    const asked: PracticeQuestion[] = [
      { question: 'Stamp record 1.', source: 'tests' },
      { question: 'Stamp record 2.', source: 'user' }, // typed in the panel: not the test
      { question: 'Stamp record 3.', source: 'tests' },
    ];
    expect(practisedTests(tests, asked)).toEqual(['a', 'c']);
  });
});
