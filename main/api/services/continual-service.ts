// continual.* for the API (and so the CLI and the studio): each run gets its own workspace under the
// data folder's runs/<id>/ (main/api/services/run-workspace.ts, docs/store.md "Run workspaces") and the
// continual runner (main/continual/run.ts) writes only there. Lists the workspaces with their status
// (a run stored as running that no process here runs was killed: interrupted, resumable), adopts a
// lesson or a run's global adapter into the Library, and deletes a workspace.
import { readdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type {
  ContinualAdoptInput,
  ContinualAdoption,
  ContinualEvent,
  ContinualLesson,
  ContinualRunDetail,
  ContinualRunInput,
  ContinualRunResult,
  ContinualRunSummary,
} from '../../../common/api/continual-schemas';
import { StudioError } from '../../../common/errors';
import { LlmSummariser } from '../../continual/llm-summariser';
import { endpointFromSettings } from '../../llm/chat-client';
import { runContinual, type ContinualDeps, type Summariser } from '../../continual/run';
import { templateLesson } from '../../continual/summarise';
import { RUN_ID, RunWorkspace } from './run-workspace';
import { parseSkillMd } from '../../skills/parse';
import { bodyHash } from '../../skills/normalize';
import type { AdaptersRepo, StoredAdapter } from '../../store/adapters-repo';
import type { AdoptionsRepo, StoredAdoption } from '../../store/adoptions-repo';
import type { StoredContinualRun, StoredEpisode } from '../../store/continual-repo';
import type { SkillsRepo } from '../../store/skills-repo';
import type { BundleRegistry } from './bundle-registry';
import type { EngineService } from './engine-service';

export const TEMPLATE_SUMMARISER: Summariser = {
  name: 'template',
  lesson: (input) => Promise.resolve(templateLesson(input)),
};

/** What adopt reads from: the run's workspace and stored episodes, and the Library bundle it writes to. */
type AdoptFrom = {
  ws: RunWorkspace;
  run: StoredContinualRun;
  bundleId: number;
  episodes: StoredEpisode[];
  base: { run: string; mode: StoredContinualRun['mode']; seed: number };
};

type Ctx = { emit(e: ContinualEvent): void; signal: AbortSignal };

export interface ContinualServiceDeps {
  /** The data folder's runs/ folder. */
  runsDir: string;
  engine: Pick<EngineService, 'current'>;
  /** The Library: written only by adopt. */
  library: {
    skills: Pick<SkillsRepo, 'get' | 'create' | 'versionRowId'>;
    repo: Pick<AdaptersRepo, 'insert' | 'get'>;
    bundles: Pick<BundleRegistry, 'current'>;
    adoptions: AdoptionsRepo;
  };
}

const short = (key: string) => key.slice(0, 12);

export class ContinualService {
  /** Open workspaces by run id (closed by dispose or delete). */
  private readonly open = new Map<string, RunWorkspace>();
  /** Runs this process is running now. */
  private readonly active = new Set<string>();

  constructor(
    private readonly deps: ContinualServiceDeps,
    private readonly settings: () => Record<string, unknown>,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  private workspace(id: string, create = false): RunWorkspace {
    let ws = this.open.get(id);
    if (!ws) {
      ws = RunWorkspace.open(this.deps.runsDir, id, this.deps.engine, create);
      this.open.set(id, ws);
    }
    return ws;
  }

  async run(input: ContinualRunInput, ctx: Ctx): Promise<ContinualRunResult> {
    this.summarisers(input); // a missing endpoint fails before a workspace is made
    const id = randomBytes(6).toString('hex');
    const ws = this.workspace(id, true);
    const { sha256 } = await ws.bundles.current();
    return this.drive(ws, ws.store.create(input, sha256, id), ctx, false);
  }

  /** A stopped run (killed, cancelled, failed) goes on from its stored episodes; a done one is read back. */
  async resume(input: { run: string }, ctx: Ctx): Promise<ContinualRunResult> {
    if (this.active.has(input.run))
      throw new StudioError('conflict', `continual run ${input.run} is running now; cancel it first`);
    const ws = this.workspace(input.run);
    const run = this.only(ws);
    const { sha256 } = await ws.bundles.current();
    if (run.bundleSha256 !== sha256)
      throw new StudioError(
        'conflict',
        `continual run ${run.id} ran with another bundle (sha256 ${run.bundleSha256.slice(0, 12)}); load that bundle to resume it`,
      );
    return this.drive(ws, run, ctx, true);
  }

  private only(ws: RunWorkspace): StoredContinualRun {
    const run = ws.store.all()[0];
    if (!run)
      throw new StudioError(
        'conflict',
        `continual run ${ws.id}: its workspace holds no run (it was stopped while being created); delete it`,
      );
    return run;
  }

  private async drive(ws: RunWorkspace, run: StoredContinualRun, ctx: Ctx, resumed: boolean) {
    this.active.add(run.id);
    try {
      const deps: ContinualDeps = {
        bundles: ws.bundles,
        skills: ws.skills,
        compiler: ws.lib.compiler,
        distiller: ws.lib.distiller,
        adapters: ws.lib.global,
        repo: ws.repo,
        cache: ws.lib.cache,
        trajectories: ws.lib.trajectories,
        store: ws.store,
        ...this.summarisers(run.input),
      };
      const result = await runContinual(run, deps, { ...ctx, resumed });
      ws.store.setStatus(run, 'done');
      return result;
    } catch (err) {
      const cancelled = err instanceof StudioError && err.code === 'cancelled';
      ws.store.setStatus(run, cancelled ? 'cancelled' : 'failed', cancelled ? null : (err as Error).message);
      throw err;
    } finally {
      this.active.delete(run.id);
    }
  }

  private summarisers(input: ContinualRunInput): Pick<ContinualDeps, 'summariser' | 'fallback'> {
    const endpoint = endpointFromSettings(this.settings());
    if (input.summariser === 'llm' && !endpoint)
      throw new StudioError(
        'invalid_input',
        'summariser "llm": no endpoint is configured (settings llmBaseUrl and llmModel)',
      );
    // Asked for by name, the LLM's failure stops the run; chosen by default, the template takes over.
    const useLlm = endpoint && input.summariser !== 'template';
    const summariser = useLlm ? new LlmSummariser(endpoint, this.fetchFn) : TEMPLATE_SUMMARISER;
    return { summariser, ...(useLlm && input.summariser === undefined && { fallback: TEMPLATE_SUMMARISER }) };
  }

  /** Every workspace under runs/, newest first; one that cannot be read is listed as failed, with why. */
  list(): { runs: ContinualRunSummary[] } {
    let names: string[];
    try {
      names = readdirSync(this.deps.runsDir).filter((n) => RUN_ID.test(n));
    } catch {
      return { runs: [] };
    }
    const runs = names.map((id) => {
      try {
        return this.summary(this.workspace(id));
      } catch (err) {
        return this.broken(id, (err as Error).message);
      }
    });
    return { runs: runs.sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? '')) };
  }

  private broken(id: string, why: string): ContinualRunSummary {
    return {
      run: id,
      mode: null,
      seed: null,
      episodes: 0,
      tier: 'distilled',
      status: 'failed',
      error: why,
      createdAt: null,
      updatedAt: null,
      points: [],
      finalPassRate: null,
    };
  }

  private summary(ws: RunWorkspace): ContinualRunSummary {
    const run = ws.store.all()[0];
    if (!run) return this.broken(ws.id, 'stopped while its workspace was being created: it holds no run; delete it');
    const points = ws.store
      .episodes(run)
      .filter((e) => e.measured)
      .map((e) => ({
        episode: e.episode,
        passRate: e.measured!.n ? e.measured!.passed / e.measured!.n : 0,
        globalVersion: e.globalVersion,
      }));
    const status =
      run.status === 'running' && !this.active.has(run.id) ? ('interrupted' as const) : (run.status as 'running');
    return {
      run: run.id,
      mode: run.mode,
      seed: run.input.seed ?? 0,
      episodes: run.input.episodes,
      tier: run.input.tier ?? 'distilled',
      status,
      error:
        status === 'interrupted'
          ? `stopped during episode ${points.length + 1} (the process was killed or closed); Resume goes on from there`
          : run.error,
      createdAt: run.createdAt,
      updatedAt: run.updatedAt,
      points,
      finalPassRate: points.length === run.input.episodes ? points.at(-1)!.passRate : null,
    };
  }

  get(input: { run: string }): ContinualRunDetail {
    const ws = this.workspace(input.run);
    const summary = this.summary(ws);
    const run = ws.store.all()[0];
    const lessons: ContinualLesson[] = [];
    const globals: ContinualRunDetail['globals'] = [];
    if (run) {
      const adapters = ws.repo.list();
      for (const e of ws.store.episodes(run)) {
        if (e.lesson) {
          const skill = ws.skills.get(e.lesson.name, e.lesson.version);
          const a = this.lessonAdapter(adapters, e.lesson);
          lessons.push({
            episode: e.episode,
            world: e.world,
            name: e.lesson.name,
            version: e.lesson.version,
            text: skill?.content ?? '',
            adapter: a ? short(a.key) : null,
            tier: a ? (a.recipe.kind === 'distill' ? 'distilled' : 'instant') : null,
          });
        }
      }
      const bundleRow = adapters[0]?.bundle.rowId;
      if (bundleRow !== undefined) {
        const byVersion = new Map(ws.store.episodes(run).map((e) => [e.globalVersion, e.episode]));
        for (const g of ws.repo.globalHistory(bundleRow).reverse())
          globals.push({ version: g.n, adapter: short(g.adapterKey), episode: byVersion.get(g.n) ?? 0 });
      }
    }
    return { ...summary, lessons, globals, dir: ws.dir };
  }

  /** The adapter a lesson was measured with: its newest distilled one, else its instant one. */
  private lessonAdapter(adapters: readonly StoredAdapter[], ref: { name: string; version: number }) {
    const mine = adapters.filter((a) => a.skill?.name === ref.name && a.skill.version === ref.version);
    return mine.find((a) => a.recipe.kind === 'distill') ?? mine.find((a) => a.recipe.kind === 'instant') ?? null;
  }

  /** Copies a lesson (a new Library skill and its adapter) or the run's global adapter into the Library. */
  async adopt(input: ContinualAdoptInput): Promise<ContinualAdoption> {
    const ws = this.workspace(input.run);
    const run = this.only(ws);
    const { rowId: bundleId, sha256 } = await this.deps.library.bundles.current();
    if (sha256 !== run.bundleSha256)
      throw new StudioError(
        'conflict',
        `continual run ${run.id} ran with another bundle (sha256 ${run.bundleSha256.slice(0, 12)}); load that bundle to adopt from it`,
      );
    const from: AdoptFrom = {
      ws,
      run,
      bundleId,
      episodes: ws.store.episodes(run),
      base: { run: run.id, mode: run.mode, seed: run.input.seed ?? 0 },
    };
    return this.toAdoption(
      input.what === 'lesson' ? this.adoptLesson(from, input) : await this.adoptGlobal(from, input),
    );
  }

  /** The lesson of `input.episode` as a new Library skill (renamed to `input.name`) with its adapter. */
  private adoptLesson({ ws, run, bundleId, episodes, base }: AdoptFrom, input: ContinualAdoptInput): StoredAdoption {
    const lib = this.deps.library;
    const ep = episodes.find((e) => e.episode === input.episode && e.lesson);
    if (input.episode === undefined) throw new StudioError('invalid_input', 'episode: say which lesson to adopt');
    if (!ep?.lesson)
      throw new StudioError('not_found', `episode: run ${run.id} has no lesson at episode ${input.episode}`);
    const ref = ep.lesson;
    const skill = ws.skills.get(ref.name, ref.version)!;
    const adapter = this.lessonAdapter(ws.repo.list(), ref);
    if (!adapter)
      throw new StudioError('not_found', `${ref.name}@${ref.version} has no adapter in run ${run.id}'s workspace`);
    const name = input.name ?? ref.name;
    if (lib.skills.get(name))
      throw new StudioError(
        'conflict',
        `name: a skill named "${name}" is already in the Library; choose another name (nothing was written)`,
        { field: 'name', name },
      );
    const content = skill.content.replace(/^(---\n(?:[\s\S]*?\n)?name:[ \t]*)[^\n]*/, `$1${name}`);
    const parsed = parseSkillMd(content);
    const provenance = skill.version.provenance;
    if (provenance.kind !== 'lesson') throw new StudioError('conflict', `${ref.name}@${ref.version} is not a lesson`);
    const tensors = ws.repo.load(adapter.rowId);
    const lesson = `${ref.name}@${ref.version}`;
    return lib.adoptions.adopt(
      {
        name,
        kind: 'lesson',
        source: { ...base, episode: ep.episode, lesson, adapterKey: adapter.key, recipe: adapter.recipe },
      },
      () => {
        const saved = lib.skills.create(
          name,
          content,
          parsed.frontmatter.description ?? skill.description,
          { ...provenance, adoptedFrom: lesson },
          bodyHash(parsed.body),
        );
        const versionRow = lib.skills.versionRowId(name, saved.version.version)!;
        const { adapter: row } = lib.repo.insert({
          bundleId,
          skillVersionId: versionRow,
          adapter: tensors,
          recipe: adapter.recipe,
        });
        return { adapterRowId: row.rowId, skillVersionRowId: versionRow, version: saved.version.version };
      },
    );
  }

  /** The global adapter version of `input.episode` (else the run's last) as an imported Library adapter. */
  private async adoptGlobal({ ws, run, bundleId, episodes, base }: AdoptFrom, input: ContinualAdoptInput) {
    const withGlobal = episodes.filter((e) => e.globalVersion !== null);
    const ep = input.episode === undefined ? withGlobal.at(-1) : withGlobal.find((e) => e.episode === input.episode);
    if (!ep)
      throw new StudioError(
        'not_found',
        input.episode === undefined
          ? `run ${run.id} (${run.mode}) wrote no global adapter`
          : `episode: run ${run.id} wrote no global adapter at episode ${input.episode}`,
      );
    const wsBundle = (await ws.bundles.current()).rowId;
    const g = ws.repo.globalHistory(wsBundle).find((v) => v.n === ep.globalVersion)!;
    const stored = ws.repo.get(g.adapterRowId)!;
    const tensors = ws.repo.load(g.adapterRowId);
    return this.deps.library.adoptions.adopt(
      {
        name: input.name ?? `global-${run.id}`,
        kind: 'global',
        source: { ...base, episode: ep.episode, globalVersion: g.n, adapterKey: stored.key, recipe: stored.recipe },
      },
      () => {
        const { adapter: row } = this.deps.library.repo.insert({
          bundleId,
          adapter: tensors,
          recipe: { kind: 'import', tensorsSha256: stored.tensorsSha256 },
        });
        return { adapterRowId: row.rowId, skillVersionRowId: null };
      },
    );
  }

  private toAdoption(a: StoredAdoption): ContinualAdoption {
    const row = this.deps.library.repo.get(a.adapterRowId)!;
    return {
      name: a.name,
      version: a.version,
      kind: a.kind,
      run: a.run,
      episode: a.episode,
      adapter: short(row.key),
      skill: a.kind === 'lesson' ? { name: a.name, version: a.version } : null,
      from: a.source.lesson ?? `global v${a.source.globalVersion}`,
      createdAt: a.createdAt,
    };
  }

  adoptions(): { adoptions: ContinualAdoption[] } {
    return { adoptions: this.deps.library.adoptions.list().map((a) => this.toAdoption(a)) };
  }

  /** Removes the run's workspace folder and nothing else (adopted copies stay in the Library). */
  delete(input: { run: string }): { run: string; deleted: boolean } {
    if (this.active.has(input.run))
      throw new StudioError('conflict', `continual run ${input.run} is running now; cancel it first`);
    const ws = this.workspace(input.run);
    ws.close();
    this.open.delete(input.run);
    rmSync(join(this.deps.runsDir, input.run), { recursive: true, force: true });
    return { run: input.run, deleted: true };
  }

  dispose(): void {
    for (const ws of this.open.values()) ws.close();
    this.open.clear();
  }
}
