// The skill library: filtered list, package facets and the app totals, all from the studio API.
import type { AppInfo } from '../../../common/api/contract';
import type { SkillSummary } from '../../../common/api/skill-schemas';
import { studio } from './bridge';
import { Debouncer } from './debounce';
import { toUiError, type UiError } from './errors';

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

  private readonly debounce = new Debouncer(200);
  private seq = 0;

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
    const seq = ++this.seq;
    this.loading = true;
    const query = this.query.trim();
    try {
      const skills = await studio.skills.list({
        ...(query ? { query } : {}),
        ...(this.pkg ? { package: this.pkg } : {}),
      });
      if (seq !== this.seq) return; // a newer search already answered or is on its way
      this.skills = skills;
      this.error = null;
      this.loaded = true;
    } catch (err) {
      if (seq === this.seq) this.error = toUiError(err);
    } finally {
      if (seq === this.seq) this.loading = false;
    }
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
    this.seq++;
  }
}
