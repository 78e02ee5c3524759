// The studio's settings: one row per key in `settings` (docs/store.md), each value JSON and checked
// against its schema in common/api/trajectory-schemas.ts; a key never set reads as its default.
import type { Database, Statement } from 'better-sqlite3';
import { DEFAULT_SETTINGS, Settings } from '../../common/api/trajectory-schemas';

type Key = keyof Settings;
const KEYS = Object.keys(Settings.shape) as Key[];

export class SettingsRepo {
  private readonly sql: {
    all: Statement<[], { key: string; value: string }>;
    put: Statement<[string, string, string]>;
  };

  constructor(
    private readonly db: Database,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.sql = {
      all: db.prepare('SELECT key, value FROM settings'),
      put: db.prepare(
        `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
    };
  }

  /** Every setting: the stored value, or the default where none is stored or it no longer fits. */
  get(): Settings {
    const out: Settings = { ...DEFAULT_SETTINGS };
    for (const row of this.sql.all.all()) {
      if (!KEYS.includes(row.key as Key)) continue; // a key a newer build wrote: kept, not read
      const parsed = Settings.shape[row.key as Key].safeParse(JSON.parse(row.value));
      if (parsed.success) (out as Record<Key, unknown>)[row.key as Key] = parsed.data;
    }
    return out;
  }

  /** Stores the given settings in one transaction; returns them all. */
  set(patch: Partial<Settings>): Settings {
    const now = this.clock().toISOString();
    this.db
      .transaction(() => {
        for (const key of KEYS) if (patch[key] !== undefined) this.sql.put.run(key, JSON.stringify(patch[key]), now);
      })
      .immediate();
    return this.get();
  }
}
