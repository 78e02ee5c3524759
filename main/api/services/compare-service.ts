// compare.run: one prompt answered under none / in_context / instant / wrong_skill, side by side,
// in ONE batch through the engine's per-row adapters (generateBatch). Tokens stream per column.
import {
  COMPARE_CONDITIONS,
  type CompareColumn,
  type CompareColumnSetup,
  type CompareEvent,
  type CompareRunInput,
  type CompareRunResult,
} from '../../../common/api/engine-schemas';
import type { TrajectorySampling, Verdict } from '../../../common/api/trajectory-schemas';
import { checkExpect } from '../../../common/verify/expect';
import { pickWrongSkill } from '../../../common/compare/wrong-skill';
import { StudioError } from '../../../common/errors';
import { checkPromptBytes, type EngineAdapter, type GenerateRequest } from '../../engine';
import { sharedEngine, type BundleHandle } from '../../engine/engine-client';
import { fitSkillText } from '../../skills/answer';
import type { SkillsRepo } from '../../store/skills-repo';
import type { BundleRegistry } from './bundle-registry';
import type { CompileService } from './compile-service';
import type { EngineService } from './engine-service';
import type { TrajectoryService } from './trajectory-service';

/** Finds a version's newest distilled adapter on the current bundle (DistillService). */
export interface DistilledLookup {
  distilledAdapter(ref: { name: string; version?: number }): Promise<{
    row: { key: string; skill: { name: string; version: number } | null };
    engine: EngineAdapter;
  } | null>;
}
export const DEFAULT_COMPARE_TOKENS = 128;

type SkillRef = { name: string; version: number };

interface Column {
  setup: CompareColumnSetup;
  request: GenerateRequest;
  /** The full key of the column's adapter (setup.adapter is its short id). */
  adapterKey: string | null;
}

/** A column's answer against the prompt's checker, as its trajectory keeps it. */
function verdictOf(check: NonNullable<CompareRunInput['check']>, text: string): Verdict {
  const outcome = checkExpect(check.expect, text);
  return {
    passed: outcome.passed,
    ...(check.test && { test: check.test }),
    ...(outcome.reason && { reason: outcome.reason.slice(0, 2000) }),
  };
}

/** What compare needs to keep its columns as trajectories (both, or it keeps none). */
export interface CompareRecording {
  trajectories: Pick<TrajectoryService, 'record'>;
  bundles: Pick<BundleRegistry, 'current'>;
}

export class CompareService {
  constructor(
    private readonly skills: SkillsRepo,
    private readonly compiler: CompileService,
    private readonly engine: EngineService,
    private readonly recording: CompareRecording | null = null,
    private readonly distilled: DistilledLookup | null = null,
  ) {}

  /** The other skill the wrong_skill column uses: the one asked for, else a dissimilar one
   * (pickWrongSkill: another package, the least similar quarter, drawn by this skill's name), at its
   * latest version. Null in a library of one. */
  wrongSkillFor(name: string, asked?: string): { name: string; version: number } | null {
    if (asked !== undefined) {
      if (asked === name)
        throw new StudioError('invalid_input', `wrongSkill "${asked}" is the skill being compared; name another one`, {
          field: 'wrongSkill',
        });
      const s = this.skills.get(asked);
      if (!s) throw new StudioError('not_found', `no skill "${asked}" (wrongSkill)`, { field: 'wrongSkill' });
      return { name: s.name, version: s.version.version };
    }
    const library = this.skills.list();
    const self = library.find((s) => s.name === name) ?? { name, description: '', package: null };
    const pick = pickWrongSkill(self, library);
    const other = pick === null ? undefined : library.find((s) => s.name === pick);
    return other ? { name: other.name, version: other.latestVersion } : null;
  }

  async run(
    input: CompareRunInput,
    ctx: { emit(e: CompareEvent): void; signal: AbortSignal },
  ): Promise<CompareRunResult> {
    const t0 = performance.now();
    const maxTokens = input.maxTokens ?? DEFAULT_COMPARE_TOKENS;
    const sampling = input.sampling ?? { temperature: 0 };
    const skill = this.compiler.skill({ name: input.name, version: input.version });
    const who = { name: skill.name, version: skill.version.version };
    const bundle = await this.engine.current();
    const { conditions, skipped, distilled, wrongSkill } = await this.plan(input, who, bundle);

    const compile = async (ref: SkillRef): Promise<{ id: string; key: string; engine: EngineAdapter }> => {
      const c = await this.compiler.compileAdapter(ref, {
        signal: ctx.signal,
        emit: (p) => ctx.emit({ type: 'compile', skill: p.skill, chunk: p.chunk, chunks: p.chunks }),
      });
      if (c.bundle !== bundle)
        throw new StudioError('conflict', 'the bundle changed while compare was compiling; run it again');
      return { id: c.result.adapter.id, key: c.row.key, engine: c.engine };
    };
    checkPromptBytes(bundle, Buffer.byteLength(input.prompt));
    const user = bundle.chat.render([{ role: 'user', content: input.prompt }]);
    const columns: Column[] = [];
    const base = { maxNewTokens: maxTokens, sampling, stop: [] as string[] };
    const column = (
      setup: Omit<CompareColumnSetup, 'promptTokens'>,
      request: Partial<GenerateRequest>,
      adapterKey: string | null,
    ) =>
      columns.push({
        setup: { ...setup, promptTokens: 0 },
        request: { ...base, prompt: user, ...request },
        adapterKey,
      });
    for (const condition of conditions) {
      if (condition === 'none') {
        column({ condition, adapter: null, skill: null, truncated: false }, {}, null);
      } else if (condition === 'in_context') {
        const fit = fitSkillText(bundle, skill.content, input.prompt, maxTokens);
        const prompt = bundle.chat.render([
          { role: 'system', content: fit.text },
          { role: 'user', content: input.prompt },
        ]);
        column({ condition, adapter: null, skill: who, truncated: fit.truncated }, { prompt }, null);
      } else if (condition === 'instant') {
        const a = await compile(who);
        column({ condition, adapter: a.id, skill: who, truncated: false }, { adapter: a.engine }, a.key);
      } else if (condition === 'distilled') {
        if (!distilled) continue;
        const key = distilled.row.key;
        column(
          { condition, adapter: key.slice(0, 12), skill: who, truncated: false },
          { adapter: distilled.engine },
          key,
        );
      } else if (wrongSkill) {
        const a = await compile(wrongSkill);
        column({ condition, adapter: a.id, skill: wrongSkill, truncated: false }, { adapter: a.engine }, a.key);
      }
    }
    if (ctx.signal.aborted) throw new StudioError('cancelled', 'compare cancelled');
    if (columns.length === 0) return { skill: who, wrongSkill: null, columns: [], skipped, ms: performance.now() - t0 };
    const out = await this.answer(bundle, columns, ctx);
    const result = {
      skill: who,
      wrongSkill: columns.some((c) => c.setup.condition === 'wrong_skill') ? wrongSkill : null,
      columns: out,
      skipped,
      ms: performance.now() - t0,
    };
    await this.record(input.prompt, who, columns, out, { ...sampling, maxTokens }, input.check);
    return result;
  }

  /** Which columns run, and the reason for each one skipped: the distilled column by default only when
   *  the version has a distilled adapter (asked for and absent, it is skipped with the reason). */
  private async plan(input: CompareRunInput, who: SkillRef, bundle: BundleHandle) {
    const skipped: CompareRunResult['skipped'] = [];
    const distilled = this.distilled ? await this.distilled.distilledAdapter(who) : null;
    const conditions = (input.conditions ?? COMPARE_CONDITIONS).filter(
      (c) => c !== 'distilled' || distilled !== null || input.conditions !== undefined,
    );
    // Without a hypernetwork (a GGUF or base-only bundle) no instant adapter exists, for this skill or
    // another: those columns are skipped with the reason, and the distilled one stands for the skill.
    if (!bundle.manifest.hypernet)
      for (const c of ['instant', 'wrong_skill'] as const) {
        const at = conditions.indexOf(c);
        if (at < 0) continue;
        conditions.splice(at, 1);
        skipped.push({
          condition: c,
          reason: `bundle ${bundle.manifest.id} has no hypernetwork, so ${c === 'instant' ? 'this skill has' : 'other skills have'} no instant adapter; its skills compile by distillation`,
        });
      }
    if (conditions.includes('distilled') && !distilled)
      skipped.push({
        condition: 'distilled',
        reason: `${who.name}@${who.version} has no distilled adapter for this bundle; distil it on the skill page or with pskills compile --distill`,
      });
    let wrongSkill: SkillRef | null = null;
    if (conditions.includes('wrong_skill')) {
      wrongSkill = this.wrongSkillFor(who.name, input.wrongSkill);
      if (!wrongSkill)
        skipped.push({ condition: 'wrong_skill', reason: `the library has no skill other than "${who.name}"` });
    }
    return { conditions, skipped, distilled, wrongSkill };
  }

  /** The columns answered in one batch off the main thread, each token streamed to its column, with
   *  each column's time to first token and decode rate. */
  private async answer(
    bundle: BundleHandle,
    columns: Column[],
    ctx: { emit(e: CompareEvent): void; signal: AbortSignal },
  ): Promise<CompareColumn[]> {
    // Token ids once, so the start event can say how long each prompt is.
    const requests = columns.map((c) => ({
      ...c.request,
      prompt: bundle.tokenizer.encode(c.request.prompt as string),
    }));
    columns.forEach((c, i) => (c.setup.promptTokens = requests[i]!.prompt.length));
    ctx.emit({ type: 'start', columns: columns.map((c) => c.setup) });

    const tStart = performance.now();
    const first = columns.map(() => -1);
    const last = columns.map(() => -1);
    const it = sharedEngine().generateBatch(bundle, requests, { signal: ctx.signal });
    let results;
    for (;;) {
      const step = await it.next();
      if (step.done) {
        results = step.value;
        break;
      }
      const { row, tokenId, text } = step.value;
      const now = performance.now();
      if (first[row]! < 0) first[row] = now;
      last[row] = now;
      ctx.emit({ type: 'token', column: row, condition: columns[row]!.setup.condition, tokenId, text });
    }
    if (ctx.signal.aborted) throw new StudioError('cancelled', 'compare cancelled');
    return columns.map((c, i) => {
      const r = results[i]!;
      const decodeMs = last[i]! - first[i]!;
      return {
        ...c.setup,
        text: r.text,
        completionTokens: r.tokens.length,
        ttftMs: first[i]! < 0 ? 0 : first[i]! - tStart,
        tokensPerSecond: r.tokens.length > 1 && decodeMs > 0 ? ((r.tokens.length - 1) * 1000) / decodeMs : 0,
        finishReason: r.finishReason,
      };
    });
  }

  /** Keeps each column as a trajectory (source `compare`), when the studio keeps trajectories. All
   *  columns name the compared skill; the wrong_skill column's adapter is the other skill's, named in details. */
  private async record(
    prompt: string,
    who: { name: string; version: number },
    columns: Column[],
    out: CompareColumn[],
    sampling: TrajectorySampling,
    check?: CompareRunInput['check'],
  ): Promise<void> {
    if (!this.recording) return;
    const current = await this.recording.bundles.current().catch(() => null); // a bundle gone meanwhile: no bundle named
    const bundleRef = current && { id: current.bundle.manifest.id, sha256: current.sha256 };
    this.recording.trajectories.record(
      out.map((c, i) => ({
        source: 'compare' as const,
        skill: who,
        // Trajectories name a distilled column's adapter by key (condition `adapter`).
        condition: c.condition === 'distilled' ? ('adapter' as const) : c.condition,
        adapterKey: columns[i]!.adapterKey,
        bundle: bundleRef,
        sampling,
        messages: [
          { role: 'user' as const, content: prompt },
          { role: 'assistant' as const, content: c.text },
        ],
        ...(check && { verdict: verdictOf(check, c.text) }),
        details: {
          finishReason: c.finishReason,
          promptTokens: c.promptTokens,
          completionTokens: c.completionTokens,
          ...(c.condition === 'in_context' && { truncated: c.truncated }),
          ...(c.condition === 'wrong_skill' && c.skill && { wrongSkill: c.skill }),
        },
      })),
    );
  }
}
