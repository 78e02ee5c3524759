// Which `model` names the endpoint serves and what each runs: `base`; `global` once the current
// bundle has a global adapter version; and `base:<skill>@<version>` for skills: the version's distilled
// adapter where one exists, else the instant one (compiled on first use); `#instant` / `#distilled`
// after the name choose (docs/api.md "OpenAI-compatible endpoint", docs/distill.md).
import { splitSkillRef } from '../../../common/api/skill-schemas';
import { StudioError } from '../../../common/errors';
import type { EngineAdapter } from '../../engine';
import type { SkillsRepo } from '../../store/skills-repo';
import type { GlobalAdapterService } from '../services/global-adapter-service';
import type { BundleRegistry } from '../services/bundle-registry';
import type { CompileService } from '../services/compile-service';
import type { DistilledLookup } from '../services/compare-service';

export interface ModelEntry {
  id: string;
  created: number; // unix seconds
}

export interface ModelCatalog {
  list(): Promise<ModelEntry[]>;
  /** The adapter a model name runs with (null = none), or undefined when there is no such model.
   * May compile (a skill model's first use) and throw a StudioError (e.g. a bundle without hypernet). */
  resolve(id: string): Promise<EngineAdapter | null | undefined>;
}

export class BaseOnlyCatalog implements ModelCatalog {
  private readonly created = Math.floor(Date.now() / 1000);

  async list(): Promise<ModelEntry[]> {
    return [{ id: 'base', created: this.created }];
  }

  async resolve(id: string): Promise<EngineAdapter | null | undefined> {
    return id === 'base' ? null : undefined;
  }
}

export const SKILL_MODEL_PREFIX = 'base:';

/** `base:<skill>@<n>` → {name, version}; `base:<skill>` → the latest version (the CLI's `name@N`
 * rule, splitSkillRef); null when it is not a skill model or names version 0. */
export function parseSkillModel(id: string): { name: string; version?: number } | null {
  if (!id.startsWith(SKILL_MODEL_PREFIX)) return null;
  const r = splitSkillRef(id.slice(SKILL_MODEL_PREFIX.length));
  if (!r.name || (r.version !== undefined && !(r.version >= 1 && Number.isSafeInteger(r.version)))) return null;
  return r;
}

/** Which adapter of a skill model: `#instant`, `#distilled`, or none (distilled where one exists). */
export type SkillModelKind = 'instant' | 'distilled' | 'auto';

/** `base:<skill>@<n>#kind` → the skill ref and the kind; null when it is not a skill model. A `#` suffix
 *  other than the two kinds is refused with the reason (it cannot be part of a skill name). */
export function parseSkillModelKind(
  id: string,
): { ref: { name: string; version?: number }; kind: SkillModelKind } | null {
  const hash = id.indexOf('#');
  const ref = parseSkillModel(hash < 0 ? id : id.slice(0, hash));
  if (!ref) return null;
  if (hash < 0) return { ref, kind: 'auto' };
  const kind = id.slice(hash + 1);
  if (kind !== 'instant' && kind !== 'distilled')
    throw new StudioError('invalid_input', `model "${id}": after "#" write instant or distilled, not "${kind}"`, {
      field: 'model',
    });
  return { ref, kind };
}

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/**
 * Skill models. Listed, when the current bundle has a hypernetwork: every skill's latest version, and
 * older versions that already have an adapter for this bundle. Accepted: any existing version, listed
 * or not, and `base:<skill>` for the latest. The adapter is compiled on first use and cached in the
 * library (the same one `pskills compile` makes), so later requests only look it up.
 */
export class SkillModels {
  constructor(
    private readonly skills: Pick<SkillsRepo, 'list' | 'get'>,
    private readonly compiler: Pick<CompileService, 'compileAdapter' | 'compiledFor'>,
    private readonly bundles: Pick<BundleRegistry, 'currentOrNull'>,
    private readonly distilled: DistilledLookup | null = null,
  ) {}

  async list(): Promise<ModelEntry[]> {
    const current = await this.bundles.currentOrNull(); // no bundle: base only
    if (!current?.bundle.manifest.hypernet) return [];
    const out = new Map<string, ModelEntry>();
    for (const s of this.skills.list())
      out.set(`${SKILL_MODEL_PREFIX}${s.name}@${s.latestVersion}`, {
        id: `${SKILL_MODEL_PREFIX}${s.name}@${s.latestVersion}`,
        created: seconds(s.updatedAt),
      });
    for (const c of this.compiler.compiledFor(current.rowId)) {
      const id = `${SKILL_MODEL_PREFIX}${c.name}@${c.version}`;
      if (!out.has(id)) out.set(id, { id, created: seconds(c.createdAt) });
    }
    return [...out.values()];
  }

  /** undefined: not a skill model name, or no such skill version. `#distilled` with no distilled adapter
   *  is not_found with the reason. */
  async resolve(id: string): Promise<EngineAdapter | undefined> {
    const parsed = parseSkillModelKind(id);
    const found = parsed && this.skills.get(parsed.ref.name, parsed.ref.version);
    if (!parsed || !found) return undefined;
    if (parsed.kind !== 'instant' && this.distilled) {
      const d = await this.distilled.distilledAdapter({ name: found.name, version: found.version.version });
      if (d) return d.engine;
    }
    if (parsed.kind === 'distilled')
      throw new StudioError(
        'not_found',
        `model "${id}": ${found.name}@${found.version.version} has no distilled adapter for the current bundle; distil it first (pskills compile ${found.name}@${found.version.version} --distill, or Distilled on its skill page)`,
        { field: 'model' },
      );
    return (await this.compiler.compileAdapter(parsed.ref)).engine;
  }
}

/** `base`, `global` (the EMA global adapter's newest version) when the current bundle has one, and
 * the skill models when given. */
export class LibraryCatalog implements ModelCatalog {
  private readonly base = new BaseOnlyCatalog();

  constructor(
    private readonly adapters: Pick<GlobalAdapterService, 'globalHead' | 'globalAdapter'>,
    private readonly skillModels: Pick<SkillModels, 'list' | 'resolve'> | null = null,
  ) {}

  async list(): Promise<ModelEntry[]> {
    const head = await this.adapters.globalHead();
    const global = head ? [{ id: 'global', created: Math.floor(Date.parse(head.createdAt) / 1000) }] : [];
    return [...(await this.base.list()), ...global, ...((await this.skillModels?.list()) ?? [])];
  }

  async resolve(id: string): Promise<EngineAdapter | null | undefined> {
    if (id === 'global') return (await this.adapters.globalAdapter()) ?? undefined;
    if (this.skillModels && id.startsWith(SKILL_MODEL_PREFIX)) return this.skillModels.resolve(id);
    return this.base.resolve(id);
  }
}
