// Self-written practice against the shared cases (tests/fixtures/practice-cases.json `self_written`,
// written by training/tests/practice_cases.py; training/tests/test_distill_self_written.py runs them too):
// the writer's prompts, its sampling (the engine's processors and generator, as Python's
// scoring/sample.py) and the filter, so that both sides keep and drop the same requests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  filterWritten,
  writeHeadings,
  writePrompts,
  WRITE_SAMPLING,
  WRITE_TOKENS,
} from '../../common/distill/practice';
import { processorsFor } from '../../main/engine/logits-processors';
import { samplerFor, seededRng } from '../../main/engine/sampler';

interface PySampling {
  temperature: number;
  top_p: number;
  repetition_penalty: number;
}
const W = (
  JSON.parse(readFileSync(join(process.cwd(), 'tests/fixtures/practice-cases.json'), 'utf8')) as {
    self_written: {
      tokens: number;
      sampling: PySampling;
      prompts: { skill: string; headings: string[]; prompts: string[] }[];
      rng: { seed: number; values: number[] }[];
      draws: { logits: number[]; context: number[]; sampling: PySampling; seed: number; draws: number[] }[];
      filter: { skill: string; replies: string[]; kept: string[]; dropped: Record<string, number> }[];
    };
  }
).self_written;

const engineSampling = (s: PySampling) => ({
  temperature: s.temperature,
  topP: s.top_p,
  repetitionPenalty: s.repetition_penalty,
});

describe('self-written practice (shared cases)', () => {
  it('writes with the same tokens, sampling and prompts', () => {
    expect(WRITE_TOKENS).toBe(W.tokens);
    expect(WRITE_SAMPLING).toEqual(engineSampling(W.sampling));
    for (const c of W.prompts) {
      expect(writeHeadings(c.skill)).toEqual(c.headings);
      expect(writePrompts(c.headings)).toEqual(c.prompts);
    }
  });

  it("draws as Python's sampler does: the same generator, processors and draws", () => {
    for (const r of W.rng) {
      const rng = seededRng(r.seed);
      expect(r.values.map(() => rng())).toEqual(r.values);
    }
    for (const d of W.draws) {
      const o = engineSampling(d.sampling);
      const processors = processorsFor(o);
      const sample = samplerFor(o.temperature, d.seed);
      const got = d.draws.map(() => {
        const logits = Float32Array.from(d.logits);
        for (const p of processors) p(logits, d.context);
        return sample(logits);
      });
      expect(got).toEqual(d.draws);
    }
  });

  it('keeps and drops the same requests', () => {
    for (const f of W.filter) {
      const got = filterWritten(f.replies, f.skill);
      expect(got.kept).toEqual(f.kept);
      expect(got.dropped).toEqual(f.dropped);
    }
    // Two characters (one emoji each: four UTF-16 units) are empty; three are a request.
    expect(filterWritten(['\u{1f44d}\u{1f44d}', '\u{1f44d}\u{1f44d}\u{1f44d}'], '').dropped.empty).toBe(1);
    // A BOM, U+0085 and other scripts' spaces are spaces; another script's digits are no numbering.
    expect(filterWritten(['\ufeffA fix\u0085', 'a\u3000fix', '\u0663. A fix'], '').kept).toEqual([
      'A fix',
      '\u0663. A fix',
    ]);
  });
});
