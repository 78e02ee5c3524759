// What was adopted into the Library from continual runs' workspaces (docs/store.md "adoptions"): the
// only writer of the table. `adopt` runs the copy (a new skill version, an adapter row) and records it
// in one IMMEDIATE transaction: the item lands with its record or not at all.
import type { Database, Statement } from 'better-sqlite3';

export interface AdoptionSource {
  run: string;
  mode: string;
  seed: number;
  episode: number;
  /** lesson: its name@version in the workspace; global: the workspace's global version. */
  lesson?: string;
  globalVersion?: number;
  /** The adapter's key in the workspace and how it was made there. */
  adapterKey: string;
  recipe: unknown;
}

export interface StoredAdoption {
  name: string;
  version: number;
  kind: 'lesson' | 'global';
  run: string;
  episode: number;
  source: AdoptionSource;
  adapterRowId: number;
  createdAt: string;
}

interface Row {
  name: string;
  version: number;
  kind: 'lesson' | 'global';
  run_uid: string;
  episode: number;
  source: string;
  adapter_id: number;
  created_at: string;
}

const toAdoption = (r: Row): StoredAdoption => ({
  name: r.name,
  version: r.version,
  kind: r.kind,
  run: r.run_uid,
  episode: r.episode,
  source: JSON.parse(r.source) as AdoptionSource,
  adapterRowId: r.adapter_id,
  createdAt: r.created_at,
});

export class AdoptionsRepo {
  private readonly sql: {
    insert: Statement<unknown[]>;
    all: Statement<[], Row>;
    next: Statement<[string], { n: number }>;
  };

  constructor(
    private readonly db: Database,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.sql = {
      insert: db.prepare(
        `INSERT INTO adoptions (name, version, kind, run_uid, episode, source, adapter_id, skill_version_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      all: db.prepare('SELECT * FROM adoptions ORDER BY id DESC'),
      next: db.prepare('SELECT COALESCE(MAX(version), 0) + 1 AS n FROM adoptions WHERE name = ?'),
    };
  }

  list(): StoredAdoption[] {
    return this.sql.all.all().map(toAdoption);
  }

  /**
   * Runs `copy` (which writes the skill version and adapter rows, nested as savepoints) and records the
   * adoption under `name` at the next version for that name; one transaction.
   */
  adopt(
    a: { name: string; kind: 'lesson' | 'global'; source: AdoptionSource },
    copy: () => { adapterRowId: number; skillVersionRowId: number | null; version?: number },
  ): StoredAdoption {
    return this.db
      .transaction(() => {
        const made = copy();
        const version = made.version ?? this.sql.next.get(a.name)!.n;
        const at = this.clock().toISOString();
        this.sql.insert.run(
          a.name,
          version,
          a.kind,
          a.source.run,
          a.source.episode,
          JSON.stringify(a.source),
          made.adapterRowId,
          made.skillVersionRowId,
          at,
        );
        return {
          name: a.name,
          version,
          kind: a.kind,
          run: a.source.run,
          episode: a.source.episode,
          source: a.source,
          adapterRowId: made.adapterRowId,
          createdAt: at,
        };
      })
      .immediate();
  }
}
