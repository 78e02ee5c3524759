// Distilling as the studio does it, over both transports and the /v1 endpoint, on the tiny bundle with a
// train-step graph (tests/fixtures/bundle-tiny-train, no hypernetwork): the plan (questions with their
// sources, seconds per step measured here; a bundle without the graph says Instant only), the user's own
// question list, bad input refused at the boundary, the Distilled compare column, and `base:skill@v`
// choosing the distilled adapter (`#instant` / `#distilled` choose one, with a clear error when absent).
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP_ROOT } from '../../../main/paths';
import { failure, memory, studioSuite, transports, withRoutes } from '../api/transports';
import { TINY_BUNDLE } from '../compile/fixture';

const TRAIN_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const SKILL = `---
name: greet
description: Answer a greeting with the word tests.
---
# Greet

Always answer with the word tests.

## Examples
- User: hi
- User: yo
`;
const PROMPT = 'hi';

interface V1Reply {
  error: { message: string };
  choices: { message: { content: string } }[];
}

describe.each(transports)('distilling in the studio over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-distill-studio-', { defaultBundleDir: TRAIN_BUNDLE });

  beforeAll(async () => {
    await s.api.skills.save({ name: 'greet', content: SKILL });
  });

  it('the plan lists the practice questions with their sources and a measured step time', async () => {
    const plan = await s.api.adapters.distillPlan({ name: 'greet' });
    expect(plan).toMatchObject({
      skill: { name: 'greet', version: 1 },
      available: true,
      reason: null,
      distilled: null,
    });
    expect(plan.questions.filter((q) => q.source === 'examples').map((q) => q.question)).toEqual(['hi', 'yo']);
    // Recall questions skip the Examples, the one section here: requests carry the rest.
    expect(plan.questions.some((q) => q.source === 'requests')).toBe(true);
    expect(plan.questionsError).toBeNull();
    expect(plan.estimate!.bucket).toEqual({ batch: 2, length: 16 });
    expect(plan.estimate!.secondsPerStep).toBeGreaterThan(0);
  });

  it('a version with no tests: practice made from its text, the sources named, and advice to write tests', async () => {
    await s.api.skills.save({ name: 'bare', content: '---\nname: bare\ndescription: Nothing to ask.\n---\n# Bare\n' });
    const plan = await s.api.adapters.distillPlan({ name: 'bare' });
    expect(plan.questions.length).toBeGreaterThanOrEqual(32);
    // A bare skill has no section text for cloze and names no tool: requests carry it all.
    expect(new Set(plan.questions.map((q) => q.source))).toEqual(new Set(['requests']));
    expect(plan.practice).toMatchObject({ tests: 0, heldOutTests: [], writer: 'engine' });
    expect(plan.practice.tried).toEqual(['tests', 'examples', 'requests', 'self_written', 'cloze', 'round_trip']);
    expect(plan.practice.advice).toMatch(/Write 3–5 tests/);
    expect(plan.questionsError).toBeNull();
  });

  it('bad input is refused before any work: an empty question, a source outside the list', async () => {
    const empty = await failure(
      s.api.adapters.distill({ skill: { name: 'greet' }, questions: [{ question: '  ', source: 'user' }] }).result,
    );
    expect(empty.code).toBe('invalid_input');
    const source = await failure(
      s.api.adapters.distill({
        skill: { name: 'greet' },
        questions: [{ question: 'hi', source: 'web' as 'user' }],
      }).result,
    );
    expect(source.code).toBe('invalid_input');
    expect((await s.api.adapters.list({})).length).toBe(0);
  });

  it('tests written as chat messages are practised on their chat, through the wire and in the run', async () => {
    await s.api.skills.save({ name: 'chat', content: SKILL.replace('name: greet', 'name: chat') });
    const chat = [
      { role: 'user' as const, content: 'look up order 7' },
      { role: 'assistant' as const, content: 'lookup(7)' },
      { role: 'tool' as const, content: 'shipped' },
    ];
    await s.api.verify.setTests({
      name: 'chat',
      tests: [{ id: 'c1', messages: chat, expect: { kind: 'contains', value: 'shipped' } }],
    });
    const plan = await s.api.adapters.distillPlan({ name: 'chat' });
    expect(plan.practice.tests).toBe(1);
    expect(plan.questions.filter((q) => q.source === 'tests')).toEqual([
      { question: 'shipped', source: 'tests', messages: chat },
    ]);
    const { adapter } = await s.api.adapters.distill({ skill: { name: 'chat' }, steps: 1, questions: plan.questions })
      .result;
    expect(adapter.recipe).toMatchObject({ questions: { tests: 1 } });
    const bad = await failure(
      s.api.adapters.distill({
        skill: { name: 'chat' },
        questions: [{ question: 'not the last turn', source: 'tests', messages: chat }],
      }).result,
    );
    expect(bad.code).toBe('invalid_input');
  });

  it("a call of a tool the skill names is followed up, and the adapter's recipe counts it", async () => {
    await s.api.skills.save({
      name: 'booking',
      content:
        '---\nname: booking\ndescription: Find bookings.\n---\n# Booking\n\nUse find_booking(who) for a guest.\n',
    });
    const call = 'find_booking(who="Dana")';
    const res = await s.api.adapters.distill({
      skill: { name: 'booking' },
      steps: 1,
      questions: [
        // Short enough for the fixture's 16-token bucket; the follow-up is not (counted, as the eval counts it).
        { question: 'a', source: 'examples', answer: call },
        { question: 'b', source: 'examples', answer: 'lookup_codeword(w="Mei")' },
      ],
    }).result;
    expect(res.questions.map((q) => q.source)).toEqual(['examples', 'examples', 'round_trip']);
    expect(JSON.parse(res.questions[2]!.question)).toBeTypeOf('object'); // the made-up tool result, last turn
    expect(res.adapter.recipe).toMatchObject({ questions: { examples: 2, round_trip: 1 } });
    expect(res.practice!.tried).toContain('round_trip');
  });

  it('before distilling, compare skips the Distilled column it was asked for, and says why', async () => {
    const r = await s.api.compare.run({
      name: 'greet',
      prompt: PROMPT,
      maxTokens: 4,
      conditions: ['none', 'distilled'],
    }).result;
    expect(r.columns.map((c) => c.condition)).toEqual(['none']);
    expect(r.skipped).toEqual([{ condition: 'distilled', reason: expect.stringMatching(/no distilled adapter/) }]);
  });

  it("distils on the user's own questions; the plan, compare and the library follow", async () => {
    const steps: number[] = [];
    const res = await s.api.adapters.distill(
      {
        skill: { name: 'greet' },
        steps: 3,
        questions: [
          { question: 'hi', source: 'examples' },
          { question: 'hello there', source: 'user' },
        ],
      },
      (e) => steps.push(e.step),
    ).result;
    expect(steps).toEqual([0, 1, 2, 3]);
    expect(res.questions).toEqual([
      { question: 'hi', source: 'examples' },
      { question: 'hello there', source: 'user' },
    ]);
    expect(res.adapter.recipe).toMatchObject({ kind: 'distill', steps: 3, questions: { examples: 1, user: 1 } });

    const plan = await s.api.adapters.distillPlan({ name: 'greet', version: 1 });
    expect(plan.distilled?.id).toBe(res.adapter.id);

    // By default the column shows once the version has a distilled adapter; instant needs a
    // hypernetwork this bundle lacks, so only the columns it can run are asked for here.
    const r = await s.api.compare.run({
      name: 'greet',
      prompt: PROMPT,
      maxTokens: 4,
      conditions: ['none', 'distilled'],
    }).result;
    expect(r.columns.map((c) => [c.condition, c.adapter])).toEqual([
      ['none', null],
      ['distilled', res.adapter.id],
    ]);
    expect(r.skipped).toEqual([]);
  });
});

describe('a bundle without a train-step graph', () => {
  const plain = studioSuite(memory, 'pskills-distill-plain-', { defaultBundleDir: TINY_BUNDLE });

  it('the plan says Instant only, with the reason, and measures nothing', async () => {
    await plain.api.skills.save({ name: 'greet', content: SKILL });
    const plan = await plain.api.adapters.distillPlan({ name: 'greet' });
    expect(plan).toMatchObject({ available: false, estimate: null, distilled: null });
    expect(plan.reason).toMatch(/no train-step graph, so it can compile Instant only/);
    expect(plan.questions.length).toBeGreaterThan(0);
  });
});

describe('/v1 chat completions with a skill model', () => {
  const s = studioSuite(withRoutes(memory), 'pskills-distill-v1-', { defaultBundleDir: TRAIN_BUNDLE });
  const chat = (model: string, store = false) =>
    fetch(`${s.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        messages: [{ role: 'user', content: PROMPT }],
        max_tokens: 4,
        temperature: 0,
        ...(store && { store: true }),
      }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as V1Reply }));

  beforeAll(async () => {
    await s.api.skills.save({ name: 'greet', content: SKILL });
    await s.api.settings.set({ storeTrajectories: true });
  });

  it('#distilled before there is one: 404 naming the skill and how to distil it', async () => {
    const r = await chat('base:greet@1#distilled');
    expect(r.status).toBe(404);
    expect(r.body.error.message).toMatch(/greet@1 has no distilled adapter for the current bundle; distil it first/);
  });

  it('a kind other than instant or distilled is refused', async () => {
    const r = await chat('base:greet@1#fast');
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/after "#" write instant or distilled, not "fast"/);
  });

  it('base:skill@v runs the distilled adapter once there is one; #instant still asks for the instant one', async () => {
    const res = await s.api.adapters.distill({ skill: { name: 'greet' }, steps: 4, seed: 3 }).result;
    const cmp = await s.api.compare.run({ name: 'greet', prompt: PROMPT, maxTokens: 4, conditions: ['distilled'] })
      .result;
    expect(cmp.columns[0]!.adapter).toBe(res.adapter.id);
    const distilled = await chat('base:greet@1#distilled');
    expect(distilled.status).toBe(200);
    expect(distilled.body.choices[0]!.message.content).toBe(cmp.columns[0]!.text);
    const auto = await chat('base:greet@1', true);
    expect(auto.status).toBe(200);
    expect(auto.body.choices[0]!.message.content).toBe(cmp.columns[0]!.text);
    // Kept as a trajectory naming the distilled adapter that ran.
    const kept = await s.api.trajectories.list({ source: 'openai' });
    expect(kept.items.map((t) => [t.condition, t.adapter, t.skill?.name])).toEqual([
      ['adapter', res.adapter.key, 'greet'],
    ]);
    // This bundle has no hypernetwork: the instant adapter cannot be made, and the error says so.
    const instant = await chat('base:greet#instant');
    expect(instant.status).toBe(400);
    expect(instant.body.error.message).toMatch(/no hypernetwork/);
  });
});
