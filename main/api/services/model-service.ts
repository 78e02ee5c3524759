// The Models page: the bundles the studio knows (the shipped default, those made into
// <data folder>/bundles, and folders loaded from elsewhere that the store remembers), which one the
// engine runs, making one active, and a new bundle from a local Hugging Face checkpoint or GGUF file
// (those LM Studio and Ollama keep are listed).
import { existsSync, lstatSync, statSync } from 'node:fs';
import { mkdir, readdir, rm, statfs } from 'node:fs/promises';
import { freemem, homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type {
  ModelCard,
  ModelCreateInput,
  ModelCreateProgress,
  ModelList,
  ModelOrigin,
} from '../../../common/api/model-schemas';
import { BundleFolderId } from '../../../common/api/model-schemas';
import { StudioError } from '../../../common/errors';
import { MANIFEST_FILE } from '../../engine/manifest';
import { writeActive } from '../../models/active';
import { readCard } from '../../models/card';
import { runFromHf, type FromHfOptions } from '../../models/from-hf';
import { runFromGguf } from '../../models/from-gguf';
import type { GgufSummary } from '../../models/gguf';
import { GgufReader } from '../../models/gguf-reader';
import { findLocalModels, idFrom, modelFolders, type HeaderCache } from '../../models/local-models';
import type { AdaptersRepo } from '../../store/adapters-repo';
import type { EngineService } from './engine-service';

export interface ModelServiceOptions {
  /** <data folder>/bundles */
  userDir: string;
  defaultDir: string | null;
  /** The remembered choice the engine loads first (main/models/active.ts). */
  startupDir?: () => string | null;
  /** Where LM Studio's and Ollama's folders are looked for (default: the user's home). */
  home?: string;
  /** Free memory and disk (where `dir` is), bytes; tests give small numbers. */
  freeSpace?: (dir: string) => Promise<{ memory: number; disk: number }>;
}

const GB = 1e9;

async function freeSpace(dir: string): Promise<{ memory: number; disk: number }> {
  const fs = await statfs(dir);
  return { memory: freemem(), disk: fs.bavail * fs.bsize };
}

/** Refuses a GGUF whose float32 weights (what the importer holds and writes) do not fit, with the numbers.
 *  The importer's own check (pskills_train.export.from_gguf check_resources) adds its working memory. */
export function checkGgufSpace(g: GgufSummary, free: { memory: number; disk: number }, dir: string): void {
  const fp32 = 4 * g.parameters;
  const head = `${basename(g.path)}: ${(g.parameters / 1e6).toFixed(1)} M parameters, ${(fp32 / GB).toFixed(2)} GB as float32`;
  if (fp32 > free.memory)
    throw new StudioError(
      'invalid_input',
      `${head}: more than the ${(free.memory / GB).toFixed(2)} GB of free memory; nothing was started`,
      { needBytes: fp32, freeMemoryBytes: free.memory },
    );
  if (2 * fp32 > free.disk)
    throw new StudioError(
      'invalid_input',
      `${head}: the bundle needs about ${((2 * fp32) / GB).toFixed(2)} GB of disk in ${dir}, ${(free.disk / GB).toFixed(2)} GB is free; nothing was started`,
      { needBytes: 2 * fp32, freeDiskBytes: free.disk },
    );
}

export class ModelService {
  private creating = false;
  private readonly headers: HeaderCache = new Map();
  /** The GGUF gate, off the main thread (docs/security.md "GGUF files"). */
  private readonly gguf = new GgufReader();

  constructor(
    private readonly engine: Pick<EngineService, 'load' | 'info'>,
    private readonly repo: Pick<AdaptersRepo, 'bundlePaths'>,
    private readonly opts: ModelServiceOptions,
  ) {}

  async list(): Promise<ModelList> {
    // Before the first load: the bundle the engine will load first.
    const next = this.engine.info().dir ?? this.opts.startupDir?.() ?? this.opts.defaultDir;
    const active = next ? resolve(next) : null;
    const seen = new Set<string>();
    const bundles: ModelCard[] = [];
    const problems: ModelList['problems'] = [];
    const add = async (dir: string, origin: ModelOrigin) => {
      const full = resolve(dir);
      if (seen.has(full) || !existsSync(join(full, MANIFEST_FILE))) return;
      seen.add(full);
      try {
        bundles.push(await readCard(full, origin, full === active));
      } catch (err) {
        problems.push({ dir: full, message: err instanceof Error ? err.message : String(err) });
      }
    };
    if (this.opts.defaultDir) await add(this.opts.defaultDir, 'default');
    for (const dir of await this.userFolders()) await add(dir, 'user');
    for (const dir of this.repo.bundlePaths()) await add(dir, 'loaded');
    if (active) await add(active, 'loaded');
    const folders = modelFolders(this.opts.home ?? homedir()).filter((f) => existsSync(f.dir));
    const { found, skipped } = await findLocalModels(folders, this.gguf, this.headers);
    return { bundles, problems, userDir: this.opts.userDir, found, skipped, searched: folders.map((f) => f.dir) };
  }

  /** Stops the header worker. */
  async dispose(): Promise<void> {
    await this.gguf.dispose();
  }

  /** Loads the bundle in `dir` into the engine (the old one is released once the new one works) and
   *  remembers it: the next start loads it first. */
  async activate(dir: string): Promise<ModelList> {
    if (!existsSync(join(dir, MANIFEST_FILE)))
      throw new StudioError('not_found', `dir: ${join(dir, MANIFEST_FILE)}: missing (not a bundle folder)`);
    await this.engine.load(dir);
    writeActive(this.opts.userDir, dir);
    return this.list();
  }

  /** Runs the HF exporter (a folder) or the GGUF importer (a file) into <data folder>/bundles/<id>;
   *  the new bundle's card. The exporters write a staging folder and rename it at the end. */
  async create(
    input: ModelCreateInput,
    ctx: { emit(p: ModelCreateProgress): void; signal: AbortSignal },
  ): Promise<ModelCard> {
    try {
      lstatSync(input.source); // never opens it: a FIFO must not block here
    } catch {
      throw new StudioError('not_found', `source: ${input.source}: no such folder or file`);
    }
    // Anything but a folder is a GGUF file to the gate, which names a FIFO or device as such.
    if (!existsSync(input.source) || !statSync(input.source).isDirectory()) return this.createFromGguf(input, ctx);
    if (!existsSync(join(input.source, 'config.json')))
      throw new StudioError(
        'not_found',
        `source: ${join(input.source, 'config.json')}: missing (not a Hugging Face checkpoint folder)`,
      );
    return this.writeBundle(input.id ?? folderIdOf(input.source), async (id, out) => {
      const steps = input.hypernet && input.hypernet !== 'none' ? 5 : 4;
      ctx.emit({ step: 0, steps, message: 'starting the exporter (training/.venv)' });
      const opts: FromHfOptions = {
        from: input.source,
        out,
        id,
        dtype: input.dtype ?? 'fp32',
        hypernet: input.hypernet ?? 'none',
        ...(input.loraTargets ? { loraTargets: input.loraTargets } : {}),
      };
      await runFromHf(opts, { signal: ctx.signal, onProgress: (p) => ctx.emit(p) });
    });
  }

  private async createFromGguf(
    input: ModelCreateInput,
    ctx: { emit(p: ModelCreateProgress): void; signal: AbortSignal },
  ): Promise<ModelCard> {
    if (input.hypernet === 'init')
      throw new StudioError(
        'invalid_input',
        'hypernet: a GGUF bundle has no hypernetwork (its skills compile by distillation); choose none',
      );
    // The gate first (off the main thread): a wrong file is refused in milliseconds, naming the key
    // or tensor, and the importer is never started on a file the gate refuses.
    const { summary: header, problem } = await this.gguf.read(input.source).catch((e: unknown) => {
      throw e instanceof StudioError ? e : new StudioError('invalid_input', `source: ${(e as Error).message}`);
    });
    if (problem) throw new StudioError('invalid_input', problem);
    return this.writeBundle(input.id ?? idFrom(basename(input.source)), async (id, out) => {
      checkGgufSpace(header, await (this.opts.freeSpace ?? freeSpace)(this.opts.userDir), this.opts.userDir);
      await this.removeStaleStaging(id);
      ctx.emit({ step: 0, steps: 4, message: `starting the importer (training/.venv) on ${basename(input.source)}` });
      await runFromGguf(
        {
          file: input.source,
          out,
          id,
          dtype: input.dtype ?? 'fp32',
          ...(input.loraTargets ? { loraTargets: input.loraTargets } : {}),
        },
        { signal: ctx.signal, onProgress: (p) => ctx.emit(p) },
      );
    });
  }

  /** Writes the new bundle `id` under the user's folder with `write`, one at a time, and reads its card. */
  private async writeBundle(id: string, write: (id: string, out: string) => Promise<void>): Promise<ModelCard> {
    const out = join(this.opts.userDir, id);
    if (existsSync(out))
      throw new StudioError('conflict', `id: a bundle named "${id}" already exists (${out}); choose another id`);
    if (this.creating)
      throw new StudioError('conflict', 'a bundle is already being created; wait for it or cancel it first');
    this.creating = true;
    try {
      await mkdir(this.opts.userDir, { recursive: true });
      await write(id, out);
      return await readCard(out, 'user', false);
    } finally {
      this.creating = false;
    }
  }

  /** Staging folders of `id` left by an importer that was killed (the exporters name them
   *  .<id>.tmp-<pid>); only those whose process is gone. */
  private async removeStaleStaging(id: string): Promise<void> {
    const prefix = `.${id}.tmp-`;
    for (const name of await readdir(this.opts.userDir)) {
      if (!name.startsWith(prefix)) continue;
      const pid = Number(name.slice(prefix.length));
      let alive: boolean;
      try {
        alive = Number.isInteger(pid) && pid > 0 && process.kill(pid, 0);
      } catch {
        alive = false; // ESRCH: the process is gone
      }
      if (!alive) await rm(join(this.opts.userDir, name), { recursive: true, force: true });
    }
  }

  private async userFolders(): Promise<string[]> {
    if (!existsSync(this.opts.userDir)) return [];
    const entries = await readdir(this.opts.userDir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => join(this.opts.userDir, e.name))
      .sort((a, b) => a.localeCompare(b));
  }
}

/** The checkpoint folder's name as a bundle folder id ("Qwen2.5-0.5B-Instruct" stays as it is). */
export function folderIdOf(source: string): string {
  const id = basename(resolve(source))
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  const parsed = BundleFolderId.safeParse(id);
  if (!parsed.success)
    throw new StudioError('invalid_input', `id: the folder name of ${source} does not make a bundle id; give one`);
  return id;
}
