// The schema, as an ordered list of migrations. Never edit a shipped migration: append a new one.
import type { Database } from 'better-sqlite3';

export interface Migration {
  version: number; // 1, 2, 3 … stored in PRAGMA user_version once applied
  name: string;
  up(db: Database): void;
}

// JSON columns are TEXT with json_valid checks so a bad write fails in SQLite, not on a later read.
const initialSchema = `
CREATE TABLE skills (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  package     TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX skills_package ON skills(package);

CREATE TABLE skill_versions (
  id          INTEGER PRIMARY KEY,
  skill_id    INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  n           INTEGER NOT NULL CHECK (n >= 1),
  description TEXT NOT NULL,
  content     TEXT NOT NULL,
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  body_hash   TEXT NOT NULL,
  parent_id   INTEGER REFERENCES skill_versions(id),
  provenance  TEXT NOT NULL CHECK (json_valid(provenance)),
  created_at  TEXT NOT NULL,
  UNIQUE (skill_id, n)
);
CREATE INDEX skill_versions_body_hash ON skill_versions(body_hash);
CREATE INDEX skill_versions_sha256 ON skill_versions(sha256);

CREATE TABLE import_runs (
  id          INTEGER PRIMARY KEY,
  source      TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  imported    INTEGER NOT NULL CHECK (imported >= 0),
  unchanged   INTEGER NOT NULL CHECK (unchanged >= 0),
  skipped     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(skipped))
);

CREATE TABLE bundles (
  id         INTEGER PRIMARY KEY,
  sha256     TEXT NOT NULL UNIQUE,
  manifest   TEXT NOT NULL CHECK (json_valid(manifest)),
  path       TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE adapters (
  id               INTEGER PRIMARY KEY,
  skill_version_id INTEGER REFERENCES skill_versions(id),
  bundle_id        INTEGER NOT NULL REFERENCES bundles(id),
  key              TEXT NOT NULL UNIQUE CHECK (length(key) = 64),
  rank             INTEGER NOT NULL CHECK (rank >= 0),
  alpha            REAL NOT NULL,
  recipe           TEXT NOT NULL CHECK (json_valid(recipe)),
  lineage          TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(lineage)),
  tensors          BLOB,
  tensors_path     TEXT,
  tensors_sha256   TEXT NOT NULL CHECK (length(tensors_sha256) = 64),
  created_at       TEXT NOT NULL,
  CHECK ((tensors IS NULL) <> (tensors_path IS NULL))
);
CREATE INDEX adapters_skill_version ON adapters(skill_version_id);
CREATE INDEX adapters_bundle ON adapters(bundle_id);

CREATE TABLE trajectories (
  id               INTEGER PRIMARY KEY,
  skill_version_id INTEGER NOT NULL REFERENCES skill_versions(id),
  messages         TEXT NOT NULL CHECK (json_valid(messages)),
  provenance       TEXT NOT NULL CHECK (json_valid(provenance)),
  created_at       TEXT NOT NULL
);
CREATE INDEX trajectories_skill_version ON trajectories(skill_version_id);

CREATE TABLE evaluations (
  id         INTEGER PRIMARY KEY,
  bundle_id  INTEGER NOT NULL REFERENCES bundles(id),
  config     TEXT NOT NULL CHECK (json_valid(config)),
  results    TEXT NOT NULL CHECK (json_valid(results)),
  created_at TEXT NOT NULL
);
CREATE INDEX evaluations_bundle ON evaluations(bundle_id);

CREATE TABLE global_adapter_versions (
  id         INTEGER PRIMARY KEY,
  n          INTEGER NOT NULL UNIQUE CHECK (n >= 1),
  adapter_id INTEGER NOT NULL REFERENCES adapters(id),
  beta       REAL NOT NULL CHECK (beta >= 0 AND beta <= 1),
  parent_id  INTEGER REFERENCES global_adapter_versions(id),
  created_at TEXT NOT NULL
);
`;

// Version 2: one global adapter history per bundle (an adapter only fits its own base model),
// rollbacks marked as such, append-only enforced by SQLite, and adapters found by their bytes.
const globalPerBundle = `
CREATE TABLE global_adapter_versions (
  id          INTEGER PRIMARY KEY,
  bundle_id   INTEGER NOT NULL REFERENCES bundles(id),
  n           INTEGER NOT NULL CHECK (n >= 1),
  adapter_id  INTEGER NOT NULL REFERENCES adapters(id),
  kind        TEXT NOT NULL CHECK (kind IN ('ema', 'rollback')),
  beta        REAL NOT NULL CHECK (beta >= 0 AND beta <= 1),
  parent_id   INTEGER REFERENCES global_adapter_versions(id),
  restores_id INTEGER REFERENCES global_adapter_versions(id),
  created_at  TEXT NOT NULL,
  UNIQUE (bundle_id, n),
  CHECK ((kind = 'rollback') = (restores_id IS NOT NULL))
);
CREATE TRIGGER global_adapter_versions_no_update BEFORE UPDATE ON global_adapter_versions
BEGIN SELECT RAISE(ABORT, 'global adapter history is append-only'); END;
CREATE TRIGGER global_adapter_versions_no_delete BEFORE DELETE ON global_adapter_versions
BEGIN SELECT RAISE(ABORT, 'global adapter history is append-only'); END;
CREATE INDEX adapters_tensors ON adapters(bundle_id, tensors_sha256);
`;

interface V1GlobalRow {
  id: number;
  n: number;
  adapter_id: number;
  beta: number;
  parent_id: number | null;
  created_at: string;
  bundle_id: number;
}

function migrateGlobalPerBundle(db: Database): void {
  // Version 1 rows (no build wrote any) are carried over as EMA steps of their adapter's bundle.
  const old = db
    .prepare('SELECT g.*, a.bundle_id FROM global_adapter_versions g JOIN adapters a ON a.id = g.adapter_id ORDER BY g.id')
    .all() as V1GlobalRow[];
  db.exec('DROP TABLE global_adapter_versions');
  db.exec(globalPerBundle);
  const insert = db.prepare(
    `INSERT INTO global_adapter_versions (id, bundle_id, n, adapter_id, kind, beta, parent_id, created_at)
     VALUES (@id, @bundle_id, @n, @adapter_id, 'ema', @beta, @parent_id, @created_at)`,
  );
  for (const row of old) insert.run(row);
}

export const migrations: readonly Migration[] = [
  { version: 1, name: 'initial schema', up: (db) => db.exec(initialSchema) },
  { version: 2, name: 'global adapter per bundle', up: migrateGlobalPerBundle },
];

/** The schema version this build writes; a database above it was written by a newer build. */
export const SCHEMA_VERSION = migrations.at(-1)?.version ?? 0;
