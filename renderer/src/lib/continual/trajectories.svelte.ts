// The Trajectories page: a filtered list (trajectories.list), one trajectory's messages
// (trajectories.show), rating up/down with a note or clearing it (trajectories.rate), and the JSONL
// export of what the filters select (trajectories.export, written by the studio to a file).
import type { StudioApi } from '../../../../common/api/contract';
import type { Trajectory, TrajectorySummary } from '../../../../common/api/trajectory-schemas';
import { toUiError, type UiError } from '../shared/errors';
import { Latest } from '../shared/latest';
import { exportInput, listInput, type TrajectoryFilters } from './trajectories';

export class TrajectoryBrowser {
  filters = $state<TrajectoryFilters>({ skill: '', rating: '' });
  items = $state.raw<TrajectorySummary[]>([]);
  total = $state(0);
  loading = $state(false);
  error = $state.raw<UiError | null>(null);

  selected = $state.raw<Trajectory | null>(null);
  selectError = $state.raw<UiError | null>(null);
  note = $state('');
  rating = $state(false);
  rateError = $state.raw<UiError | null>(null);

  exportFile = $state('');
  exporting = $state(false);
  exported = $state.raw<{ file: string; count: number; bytes: number } | null>(null);
  exportError = $state.raw<UiError | null>(null);

  private readonly latest = new Latest();
  private selectSeq = 0;

  constructor(private readonly api: Pick<StudioApi, 'trajectories'>) {}

  async load(): Promise<void> {
    await this.latest.run(() => this.api.trajectories.list(listInput(this.filters)), {
      busy: (on) => (this.loading = on),
      keep: (page) => {
        this.items = page.items;
        this.total = page.total;
        this.error = null;
      },
      fail: (error) => {
        this.items = [];
        this.total = 0;
        this.error = error;
      },
    });
  }

  async select(id: string): Promise<void> {
    const seq = ++this.selectSeq;
    this.rateError = null;
    try {
      const t = await this.api.trajectories.show({ id });
      if (seq !== this.selectSeq) return;
      this.selected = t;
      this.note = t.rating?.note ?? '';
      this.selectError = null;
    } catch (err) {
      if (seq !== this.selectSeq) return;
      this.selected = null;
      this.selectError = toUiError(err);
    }
  }

  /** Rates the open trajectory (null clears the rating and its note); the list row follows. */
  async rate(value: 'up' | 'down' | null): Promise<void> {
    const t = this.selected;
    if (!t || this.rating) return;
    this.rating = true;
    this.rateError = null;
    try {
      const note = this.note.trim();
      const next = await this.api.trajectories.rate({
        id: t.id,
        rating: value,
        ...(value !== null && note && { note }),
      });
      this.selected = next;
      this.note = next.rating?.note ?? '';
      this.items = this.items.map((row) => (row.id === next.id ? { ...row, rating: next.rating } : row));
    } catch (err) {
      this.rateError = toUiError(err);
    } finally {
      this.rating = false;
    }
  }

  async export(): Promise<void> {
    const file = this.exportFile.trim();
    if (this.exporting) return;
    this.exported = null;
    this.exportError = null;
    if (!file) {
      this.exportError = { code: 'invalid_input', message: 'Give the file to write the JSONL export to.' };
      return;
    }
    this.exporting = true;
    try {
      this.exported = await this.api.trajectories.export(exportInput(this.filters, file));
    } catch (err) {
      this.exportError = toUiError(err);
    } finally {
      this.exporting = false;
    }
  }
}
