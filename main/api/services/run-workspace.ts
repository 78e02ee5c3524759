// A continual run's workspace (docs/store.md "Run workspaces"): the data folder's runs/<id>/ holds the
// run's own database (its run and episode rows, lesson skills, trajectories, adapters and global
// adapter versions) and its file-backed tensors. The loop's services are built over it exactly as the
// studio builds them over the Library, so a run never writes the user's skills, adapters or global
// timeline; only Adopt copies from it, and deleting the run removes the folder and nothing else.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { StudioError } from '../../../common/errors';
import { libraryServices, type LibraryServices } from './library-services';
import type { BundleRegistry } from './bundle-registry';
import type { EngineService } from './engine-service';
import type { AdaptersRepo } from '../../store/adapters-repo';
import { ContinualRepo } from '../../store/continual-repo';
import { openDatabase, type Database } from '../../store/db';
import type { SkillsRepo } from '../../store/skills-repo';

export const RUNS_DIR = 'runs';
export const WORKSPACE_DB = 'run.db';
export const RUN_ID = /^[0-9a-f]{12}$/;

export class RunWorkspace {
  readonly db: Database;
  /** The loop's services, built over the workspace's database as the studio's are over the Library. */
  readonly lib: LibraryServices;
  readonly skills: SkillsRepo;
  readonly repo: AdaptersRepo;
  readonly bundles: BundleRegistry;
  readonly store: ContinualRepo;

  private constructor(
    readonly id: string,
    readonly dir: string,
    engine: Pick<EngineService, 'current'>,
  ) {
    this.db = openDatabase(join(dir, WORKSPACE_DB));
    const lib = (this.lib = libraryServices({ db: this.db, dir, engine }));
    ({ skills: this.skills, adapters: this.repo, bundles: this.bundles } = lib);
    // The lessons are made from the episode's trajectories: the workspace always keeps them.
    if (!lib.settings.get().storeTrajectories) lib.settings.set({ storeTrajectories: true });
    this.store = new ContinualRepo(this.db);
  }

  /** The workspace folder of run `id` under `runsDir`; `create` makes the folder, else it must exist. */
  static open(runsDir: string, id: string, engine: Pick<EngineService, 'current'>, create = false): RunWorkspace {
    if (!RUN_ID.test(id)) throw new StudioError('invalid_input', `run: "${id}" is not a run id (12 hex digits)`);
    const dir = join(runsDir, id);
    if (create) mkdirSync(dir, { recursive: true });
    else if (!existsSync(join(dir, WORKSPACE_DB)))
      throw new StudioError('not_found', `no continual run "${id}" (no workspace at ${dir})`, { run: id });
    return new RunWorkspace(id, dir, engine);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
