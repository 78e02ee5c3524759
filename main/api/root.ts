// Composition root: builds every service by hand and wires them into the handler table.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { studioContract, type StudioContract, type StudioHandlers } from '../../common/api/contract';
import { openDatabase } from '../store/db';
import { SettingsRepo } from '../store/settings-repo';
import { Dispatcher } from './dispatcher';
import { LibraryCatalog, SkillModels } from './openai/models';
import { openAiRoute } from './openai/route';
import { libraryServices } from './services/library-services';
import { AdapterService } from './services/adapter-service';
import { CompareService } from './services/compare-service';
import type { CompileService } from './services/compile-service';
import { EngineService } from './services/engine-service';
import { GenerationService } from './services/generation-service';
import { ModelService } from './services/model-service';
import { readActive } from '../models/active';
import type { Route } from './transports/web-host';
import { ImportService } from './services/import-service';
import { ExampleService } from './services/example-service';
import { SkillService } from './services/skill-service';
import { OpenAiRecorder } from './services/openai-recorder';
import { PlaygroundService } from './services/playground-service';
import type { TrajectoryService } from './services/trajectory-service';
import { VerifyService } from './services/verify-service';
import { EvolveService } from './services/evolve-service';
import { EvolveRepo } from '../store/evolve-repo';
import { ContinualService } from './services/continual-service';
import { AdoptionsRepo } from '../store/adoptions-repo';
import { RUNS_DIR } from './services/run-workspace';
import { APP_VERSION, DEFAULT_BUNDLE_DIR } from '../paths';
import type { Provider } from '../engine';

export interface StudioOptions {
  dataDir: string; // holds studio.db and the download cache
  cacheDir?: string;
  /** Bundle loaded when none is named; default resources/bundles/default. */
  defaultBundleDir?: string | null;
  /** Execution provider for every bundle load (CLI --provider); default: the executionProvider setting. */
  provider?: Provider;
  /** Where LM Studio's and Ollama's model folders are looked for; default: the user's home. */
  modelsHome?: string;
}

export interface Studio {
  dispatcher: Dispatcher<StudioContract>;
  engine: EngineService;
  compiler: CompileService;
  /** Recording and export of trajectories (the CLI streams exports from it). */
  trajectories: TrajectoryService;
  /** HTTP routes the web host mounts beside the studio API (the OpenAI-compatible endpoint). */
  routes: Route[];
  dispose(): Promise<void>;
}

// eslint-disable-next-line max-lines-per-function -- the composition root wires every service and the handler table by hand
export function createStudio(opts: StudioOptions): Studio {
  mkdirSync(opts.dataDir, { recursive: true });
  const dbPath = join(opts.dataDir, 'studio.db');
  const db = openDatabase(dbPath);
  const settingsRepo = new SettingsRepo(db);
  const engine = new EngineService({
    defaultBundleDir: opts.defaultBundleDir === undefined ? DEFAULT_BUNDLE_DIR : opts.defaultBundleDir,
    providerOf: () => opts.provider ?? settingsRepo.get().executionProvider,
    startupDir: () => readActive(join(opts.dataDir, 'bundles')),
    ...(opts.modelsHome ? { home: opts.modelsHome } : {}),
  });
  const library = libraryServices({ db, dir: opts.dataDir, engine, settings: settingsRepo });
  const { skills: repo, adapters: adaptersRepo, bundles, cache: adapterCache, compiler, distiller } = library;
  const { global: globalAdapter, trajectories, tests: skillTests } = library;
  const skills = new SkillService(repo);
  const imports = new ImportService(repo, opts.cacheDir ?? join(opts.dataDir, 'cache'));
  const adapters = new AdapterService({
    repo: adaptersRepo,
    bundles,
    factory: library.factory,
    rehearser: distiller,
    maxMergeRank: () => trajectories.settings().maxMergeRank,
  });
  const compare = new CompareService(repo, compiler, engine, { trajectories, bundles }, distiller);
  // engine.generate with the adapter the request chooses (library, skill version or global).
  const generation = new GenerationService(engine, adaptersRepo, bundles, adapterCache, compiler);
  const playground = new PlaygroundService(generation, bundles, adaptersRepo, trajectories);
  const verify = new VerifyService(compiler, skillTests, adaptersRepo, adapterCache, bundles, trajectories);
  const examples = new ExampleService(imports, verify);
  const evolve = new EvolveService(
    new EvolveRepo(db),
    repo,
    compiler,
    verify,
    skillTests,
    bundles,
    settingsRepo,
    trajectories,
    undefined,
    distiller,
  );
  // Continual runs write only their own workspaces under runs/ (main/api/services/run-workspace.ts); the
  // Library is written by adopt alone.
  const continual = new ContinualService(
    {
      runsDir: join(opts.dataDir, RUNS_DIR),
      engine,
      library: { skills: repo, repo: adaptersRepo, bundles, adoptions: new AdoptionsRepo(db) },
    },
    () => trajectories.settings(),
  );

  const models = new ModelService(engine, adaptersRepo, {
    userDir: join(opts.dataDir, 'bundles'),
    defaultDir: opts.defaultBundleDir === undefined ? DEFAULT_BUNDLE_DIR : opts.defaultBundleDir,
    startupDir: () => readActive(join(opts.dataDir, 'bundles')),
    ...(opts.modelsHome ? { home: opts.modelsHome } : {}),
  });

  const handlers: StudioHandlers = {
    app: {
      info: () => ({ version: APP_VERSION, dataDir: opts.dataDir, dbPath, skills: repo.count() }),
    },
    skills: {
      list: (i) => skills.list(i),
      packages: () => skills.packages(),
      get: (i) => skills.get(i),
      save: (i) => skills.save(i),
      create: (i) => skills.create(i),
      validate: (i) => skills.validate(i),
      delete: (i) => skills.delete(i),
    },
    import: {
      run: (i, ctx) => imports.run(i, ctx),
      upload: (i, ctx) => imports.upload(i, ctx),
      example: () => examples.load(),
    },
    engine: {
      loadBundle: (i) => engine.load(i.dir),
      info: () => engine.info(),
      generate: (i, ctx) => playground.generate(i, ctx),
    },
    models: {
      list: () => models.list(),
      activate: (i) => models.activate(i.dir),
      create: (i, ctx) => models.create(i, ctx),
    },
    adapters: {
      list: () => adapters.list(),
      get: (i) => adapters.get(i),
      import: (i) => adapters.import(i),
      export: (i) => adapters.export(i),
      merge: (i, ctx) => adapters.merge(i, ctx),
      mergePreview: (i) => adapters.mergePreview(i),
      visualize: (i) => adapters.visualize(i),
      similarity: (i) => adapters.similarity(i),
      compare: (i) => adapters.compareDeprecated(i), // deprecated alias of similarity, one release
      delete: (i) => adapters.delete(i),
      rename: (i) => adapters.rename(i),
      compile: (i, ctx) => compiler.compile(i, ctx),
      distill: (i, ctx) => distiller.run(i, ctx),
      distillPlan: (i) => distiller.plan(i),
    },
    compare: {
      run: (i, ctx) => compare.run(i, ctx),
    },
    ema: {
      update: (i) => globalAdapter.emaUpdateOffThread(i),
      history: () => globalAdapter.emaHistory(),
      rollback: (i) => globalAdapter.emaRollback(i),
    },
    trajectories: {
      list: (i) => trajectories.list(i),
      show: (i) => trajectories.show(i),
      add: (i) => trajectories.add(i),
      rate: (i) => trajectories.rate(i),
      export: (i) => trajectories.export(i),
      import: (i) => trajectories.importFile(i),
    },
    settings: {
      get: () => trajectories.settings(),
      set: (i) => trajectories.setSettings(i),
    },
    verify: {
      tests: (i) => verify.get(i),
      setTests: (i) => verify.set(i),
      run: (i, ctx) => verify.run(i, ctx),
    },
    evolve: {
      run: (i, ctx) => evolve.run(i, ctx),
      resume: (i, ctx) => evolve.resume(i, ctx),
      list: (i) => evolve.list(i),
      get: (i) => evolve.get(i),
      accept: (i) => evolve.accept(i),
      reject: (i) => evolve.reject(i),
    },
    continual: {
      run: (i, ctx) => continual.run(i, ctx),
      resume: (i, ctx) => continual.resume(i, ctx),
      list: () => continual.list(),
      get: (i) => continual.get(i),
      adopt: (i) => continual.adopt(i),
      adoptions: () => continual.adoptions(),
      delete: (i) => continual.delete(i),
    },
  };
  return {
    dispatcher: new Dispatcher(studioContract, handlers),
    engine,
    compiler,
    trajectories,
    routes: [
      openAiRoute(
        engine,
        new LibraryCatalog(globalAdapter, new SkillModels(repo, compiler, bundles, distiller)),
        new OpenAiRecorder(trajectories, bundles, compiler, globalAdapter, distiller),
      ),
    ],
    dispose: async () => {
      continual.dispose();
      await models.dispose();
      await engine.dispose();
      db.close();
    },
  };
}
