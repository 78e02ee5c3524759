// The Playground's adapter picker, pure (unit-tested without a DOM): the options (none, the global
// adapter, every skill at a version, every library adapter), what is disabled and why, and the one
// <select> value each choice is written as.
import type { AdapterSummary, GlobalVersion } from '../../../../common/api/adapter-schemas';
import type { AdapterChoice } from '../../../../common/api/engine-schemas';
import type { SkillSummary } from '../../../../common/api/skill-schemas';
import { adapterTitle } from '../../../../common/adapters/name';

export interface AdapterOption {
  value: string;
  label: string;
  disabled: boolean;
  /** Why it is disabled, or what it is. */
  title: string;
}

export interface AdapterOptions {
  none: AdapterOption;
  global: AdapterOption;
  skills: AdapterOption[];
  library: AdapterOption[];
}

export interface PickerContext {
  adapters: readonly AdapterSummary[];
  skills: readonly SkillSummary[];
  /** The loaded bundle's id (null: none loaded yet). */
  bundleId: string | null;
  hasHypernet: boolean;
  /** The loaded bundle's newest global version, if it has one. */
  global: GlobalVersion | null;
}

/** The <select> value of a choice; a skill's version is picked beside it. */
export function choiceValue(choice: AdapterChoice | null): string {
  if (!choice) return '';
  if (choice.kind === 'global') return 'global';
  if (choice.kind === 'skill') return `skill:${choice.name}`;
  return `library:${choice.id}`;
}

/** The choice a <select> value makes (null: the base model). */
export function choiceOf(value: string, skillVersion: number | null = null): AdapterChoice | null {
  if (value === 'global') return { kind: 'global' };
  if (value.startsWith('skill:')) {
    const name = value.slice('skill:'.length);
    return skillVersion === null ? { kind: 'skill', name } : { kind: 'skill', name, version: skillVersion };
  }
  if (value.startsWith('library:')) return { kind: 'library', id: value.slice('library:'.length) };
  return null;
}

/** What an adapter was made from, in a few words. */
export function adapterOrigin(a: AdapterSummary): string {
  const r = a.recipe;
  if (r.kind === 'instant') return a.skill ? `${a.skill.name}@${a.skill.version}` : 'compiled';
  if (r.kind === 'distill') return a.skill ? `${a.skill.name}@${a.skill.version} distilled` : 'distilled';
  if (r.kind === 'merge') return `${r.method} merge of ${r.sources.length}`;
  if (r.kind === 'ema') return `EMA step (β ${r.beta})`;
  return 'imported';
}

export function adapterOptions(ctx: PickerContext): AdapterOptions {
  const noHypernet = 'The loaded bundle has no hypernetwork to compile skills with';
  return {
    none: { value: '', label: 'None (base model)', disabled: false, title: 'The base model alone' },
    global: ctx.global
      ? {
          value: 'global',
          label: `Global adapter (v${ctx.global.version}, rank ${ctx.global.rank})`,
          disabled: false,
          title: `The newest global version of bundle ${ctx.bundleId ?? ''}: adapter ${ctx.global.adapter}`,
        }
      : {
          value: 'global',
          label: 'Global adapter (none yet)',
          disabled: true,
          title: 'This bundle has no global adapter yet: an EMA update makes version 1',
        },
    skills: ctx.skills.map((s) => ({
      value: `skill:${s.name}`,
      label: s.name,
      disabled: !ctx.hasHypernet,
      title: ctx.hasHypernet ? `${s.name}, compiled with the loaded bundle on first use` : noHypernet,
    })),
    library: ctx.adapters.map((a) => {
      const other = ctx.bundleId !== null && a.bundle.id !== ctx.bundleId;
      return {
        value: `library:${a.id}`,
        // The name first, the hash last (docs/guide.md, "Adapter names").
        label: `${adapterTitle(a)} · rank ${a.rank} · ${a.id}${other ? ` (bundle ${a.bundle.id})` : ''}`,
        disabled: other,
        title: other
          ? `Made for bundle ${a.bundle.id}: load that bundle to use it`
          : `Adapter ${a.id} of bundle ${a.bundle.id}`,
      };
    }),
  };
}

/** A short label of the choice, for the page's toolbar. */
export function choiceLabel(choice: AdapterChoice | null): string {
  if (!choice) return 'base model';
  if (choice.kind === 'global') return 'global adapter';
  if (choice.kind === 'skill') return `${choice.name}@${choice.version ?? 'latest'}`;
  return `adapter ${choice.id}`;
}

/** Versions a skill can be run at, newest first (versions are numbered 1…latest, none removed). */
export function skillVersions(skill: SkillSummary | undefined): number[] {
  return skill ? Array.from({ length: skill.latestVersion }, (_, i) => skill.latestVersion - i) : [];
}
