// How an adapter was made, in words for the Adapters page: its kind and where it came from.
import type { AdapterSummary } from '../../../../common/api/adapter-schemas';
import { kindWord } from '../shared/words';

export interface AdapterOrigin {
  /** 'import', 'merge', 'ema', or whatever kind a newer recipe names (e.g. 'instant'). */
  kind: string;
  /** The kind as the page shows it (lib/shared/words.ts): a skill's compiled one is `instant` and its
   *  distillation `distilled` (the two tiers, docs/distill.md); a merge `merged`, an EMA version `global`,
   *  an import `imported`. */
  label: string;
  /** One line: the method and its numbers. */
  summary: string;
}

const num = (n: number) => String(Number(n.toFixed(4)));

export function adapterOrigin(a: AdapterSummary): AdapterOrigin {
  const recipe = a.recipe as AdapterSummary['recipe'] | { kind: string };
  const skill = a.skill ? `${a.skill.name}@${a.skill.version}` : null;
  switch (recipe.kind) {
    case 'import':
      return { kind: 'import', label: 'imported', summary: skill ? `PEFT folder, ${skill}` : 'PEFT folder' };
    case 'merge': {
      const r = recipe as Extract<AdapterSummary['recipe'], { kind: 'merge' }>;
      const weights = r.weights.length ? ` · weights ${r.weights.map(num).join(', ')}` : '';
      const rank = r.rank !== null ? ` → rank ${r.rank}` : '';
      return { kind: 'merge', label: 'merged', summary: `${r.method} of ${r.sources.length}${weights}${rank}` };
    }
    case 'ema': {
      const r = recipe as Extract<AdapterSummary['recipe'], { kind: 'ema' }>;
      return {
        kind: 'ema',
        label: 'global',
        summary: `${r.sources[0] === null ? 'first global version' : 'global update'} · β ${num(r.beta)} · budget ${r.rankBudget}`,
      };
    }
    case 'instant': {
      const r = recipe as Extract<AdapterSummary['recipe'], { kind: 'instant' }>;
      return { kind: 'instant', label: 'instant', summary: `${r.hypernet} hypernetwork · ${r.combine} of chunks` };
    }
    case 'distill': {
      const r = recipe as Extract<AdapterSummary['recipe'], { kind: 'distill' }>;
      const sources = Object.entries(r.questions)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ');
      return {
        kind: 'distill',
        label: 'distilled',
        summary: `distilled from ${r.from === 'instant' ? 'the instant adapter' : 'zero'} · ${r.steps} steps · final loss ${num(r.finalLoss)} · ${num(r.seconds)} s · practice ${sources}`,
      };
    }
    default:
      return { kind: recipe.kind, label: kindWord(recipe.kind), summary: skill ?? kindWord(recipe.kind) };
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
