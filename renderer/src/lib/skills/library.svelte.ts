// The skill library: filtered list, package facets and the app totals, all from the studio API; the
// table's sort and selection; deleting a skill (with the dialog's state).
import { SvelteSet } from 'svelte/reactivity';
import type { AppInfo } from '../../../../common/api/contract';
import type { SkillSummary } from '../../../../common/api/skill-schemas';
import { studio } from '../shared/bridge';
import { Debouncer } from '../shared/debounce';
import { toUiError, type UiError } from '../shared/errors';
import { Latest } from '../shared/latest';
import { DEFAULT_SORT, nextSort, type Sort, type SortKey } from './library-table';

export interface PackageCount {
  package: string;
  skills: number;
}

export class Library {
  query = $state('');
  pkg = $state('');
  skills = $state.raw<SkillSummary[]>([]);
  packages = $state.raw<PackageCount[]>([]);
  info = $state.raw<AppInfo | null>(null);
  loading = $state(false);
  loaded = $state(false);
  error = $state.raw<UiError | null>(null);
  sort = $state.raw<Sort>(DEFAULT_SORT);
  /** Names ticked in the table (kept across searches; names no longer listed are dropped on load). */
  readonly selected = new SvelteSet<string>();
  /** The skill the Delete dialog asks about. */
  deleteTarget = $state.raw<SkillSummary | null>(null);
  deleting = $state(false);
  deleteError = $state.raw<UiError | null>(null);

  private readonly debounce = new Debouncer(200);
  private readonly latest = new Latest();

  /** onDeleted: a skill is gone (its draft and lab state can go too). */
  constructor(private readonly onDeleted: (name: string) => void = () => {}) {}

  sortBy(key: SortKey): void {
    this.sort = nextSort(this.sort, key);
  }

  toggle(name: string): void {
    if (!this.selected.delete(name)) this.selected.add(name);
  }

  /** Ticks every name given, or unticks them all when every one is already ticked. */
  toggleAll(names: readonly string[]): void {
    const all = names.length > 0 && names.every((n) => this.selected.has(n));
    for (const n of names) {
      if (all) this.selected.delete(n);
      else this.selected.add(n);
    }
  }

  clearSelection(): void {
    this.selected.clear();
  }

  askDelete(skill: SkillSummary): void {
    this.deleteTarget = skill;
    this.deleteError = null;
  }

  cancelDelete(): void {
    if (this.deleting) return;
    this.deleteTarget = null;
    this.deleteError = null;
  }

  /** Deletes the skill the dialog names; on a refusal the dialog stays with the studio's reason. */
  async confirmDelete(): Promise<void> {
    const target = this.deleteTarget;
    if (!target || this.deleting) return;
    this.deleting = true;
    this.deleteError = null;
    try {
      await studio.skills.delete({ name: target.name });
      this.deleteTarget = null;
      this.selected.delete(target.name);
      this.onDeleted(target.name);
      await this.refresh();
    } catch (err) {
      this.deleteError = toUiError(err);
    } finally {
      this.deleting = false;
    }
  }

  /** Typing in the search box: ask the studio once the user pauses. */
  setQuery(query: string): void {
    this.query = query;
    this.debounce.schedule(() => void this.loadSkills());
  }

  setPackage(pkg: string): void {
    this.pkg = pkg;
    this.debounce.cancel();
    void this.loadSkills();
  }

  clearFilters(): void {
    this.query = '';
    this.pkg = '';
    this.debounce.cancel();
    void this.loadSkills();
  }

  /** Everything: the list, the package facets and the totals (after an import or a save). */
  async refresh(): Promise<void> {
    await Promise.all([this.loadSkills(), this.loadFacets()]);
  }

  async loadSkills(): Promise<void> {
    const query = this.query.trim();
    const input = { ...(query ? { query } : {}), ...(this.pkg ? { package: this.pkg } : {}) };
    await this.latest.run(() => studio.skills.list(input), {
      busy: (on) => (this.loading = on),
      keep: (skills) => {
        this.skills = skills;
        if (!query && !this.pkg && this.selected.size) {
          // The whole library: forget ticks of skills that no longer exist.
          const names = new Set(skills.map((s) => s.name)); // eslint-disable-line svelte/prefer-svelte-reactivity -- a lookup, never rendered
          for (const n of [...this.selected]) if (!names.has(n)) this.selected.delete(n);
        }
        this.error = null;
        this.loaded = true;
      },
      fail: (error) => (this.error = error),
    });
  }

  async loadFacets(): Promise<void> {
    try {
      const [packages, info] = await Promise.all([studio.skills.packages({}), studio.app.info({})]);
      this.packages = packages;
      this.info = info;
    } catch (err) {
      this.error = toUiError(err);
    }
  }

  dispose(): void {
    this.debounce.dispose();
    this.latest.cancel();
  }
}
