// The services over one library database, built once and by name: the studio's Library (root.ts) and
// each continual run's workspace (run-workspace.ts) are the same house over different files.
import { AdapterCache } from './adapter-cache';
import { AdapterFactory } from './adapter-factory';
import { BundleRegistry } from './bundle-registry';
import { CompileService } from './compile-service';
import { DistillService } from './distill-service';
import type { EngineService } from './engine-service';
import { GlobalAdapterService } from './global-adapter-service';
import { PracticeWriter } from './practice-writer';
import { TrajectoryService } from './trajectory-service';
import { AdaptersRepo } from '../../store/adapters-repo';
import type { Database } from '../../store/db';
import { SettingsRepo } from '../../store/settings-repo';
import { SkillTestsRepo } from '../../store/skill-tests-repo';
import { SkillsRepo } from '../../store/skills-repo';
import { TrajectoriesRepo } from '../../store/trajectories-repo';

export interface LibraryServices {
  readonly skills: SkillsRepo;
  readonly adapters: AdaptersRepo;
  readonly tests: SkillTestsRepo;
  readonly settings: SettingsRepo;
  /** One bundle registry and one cache of decoded adapters, shared by every service that needs them. */
  readonly bundles: BundleRegistry;
  readonly cache: AdapterCache;
  /** The one sequence every adapter is made by (resolve, make, store, summarise). */
  readonly factory: AdapterFactory;
  readonly global: GlobalAdapterService;
  readonly compiler: CompileService;
  readonly distiller: DistillService;
  readonly trajectories: TrajectoryService;
}

export interface LibraryDeps {
  readonly db: Database;
  /** Where file-backed adapter tensors go (the data folder, or a run's workspace folder). */
  readonly dir: string;
  readonly engine: Pick<EngineService, 'current'>;
  /** The settings repo when the caller already made one over `db` (the engine reads it first). */
  readonly settings?: SettingsRepo;
}

export function libraryServices({ db, dir, engine, settings = new SettingsRepo(db) }: LibraryDeps): LibraryServices {
  const skills = new SkillsRepo(db);
  const adapters = new AdaptersRepo(db, dir);
  const tests = new SkillTestsRepo(db);
  const bundles = new BundleRegistry(engine, adapters);
  const cache = new AdapterCache(adapters);
  const factory = new AdapterFactory({ skills, repo: adapters, bundles, cache });
  const compiler = new CompileService(factory, adapters, bundles);
  // Self-written practice: the configured endpoint when there is one, else the engine (practice-writer.ts).
  const distiller = new DistillService({
    factory,
    compiler,
    tests,
    repo: adapters,
    bundles,
    writer: new PracticeWriter(settings),
  });
  return {
    skills,
    adapters,
    tests,
    settings,
    bundles,
    cache,
    factory,
    global: new GlobalAdapterService(adapters, bundles, cache, factory),
    compiler,
    distiller,
    trajectories: new TrajectoryService(new TrajectoriesRepo(db), skills, settings),
  };
}
