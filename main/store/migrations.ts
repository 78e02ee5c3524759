// The schema, as an ordered list of migrations. Never edit a shipped migration: append a new one.
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
    .prepare(
      'SELECT g.*, a.bundle_id FROM global_adapter_versions g JOIN adapters a ON a.id = g.adapter_id ORDER BY g.id',
    )
    .all() as V1GlobalRow[];
  db.exec('DROP TABLE global_adapter_versions');
  db.exec(globalPerBundle);
  const insert = db.prepare(
    `INSERT INTO global_adapter_versions (id, bundle_id, n, adapter_id, kind, beta, parent_id, created_at)
     VALUES (@id, @bundle_id, @n, @adapter_id, 'ema', @beta, @parent_id, @created_at)`,
  );
  for (const row of old) insert.run(row);
}

// Version 3: lineage as rows with foreign keys instead of a JSON list of row ids. A parent cannot be
// deleted while a child names it (RESTRICT: SQLite refuses the DELETE, no scan of every lineage);
// deleting a child deletes its rows (CASCADE). The index on parent_id keeps that check a lookup.
// The tensor byte count moves into the row, so listing adapters never stats a file.
const adapterParents = `
CREATE TABLE adapter_parents (
  child_id  INTEGER NOT NULL REFERENCES adapters(id) ON DELETE CASCADE,
  position  INTEGER NOT NULL CHECK (position >= 0),
  parent_id INTEGER NOT NULL REFERENCES adapters(id) ON DELETE RESTRICT,
  weight    REAL NOT NULL,
  PRIMARY KEY (child_id, position)
) WITHOUT ROWID;
CREATE INDEX adapter_parents_parent ON adapter_parents(parent_id);
ALTER TABLE adapters ADD COLUMN tensors_bytes INTEGER NOT NULL DEFAULT 0 CHECK (tensors_bytes >= 0);
`;

// Lineage entries the previous build could not read are not carried over: a parent row that no longer
// exists, or an entry without a numeric id and weight (adapters.list failed on them). Positions keep
// the list's order (gaps where an entry was dropped).
const copyLineage = `
INSERT INTO adapter_parents (child_id, position, parent_id, weight)
SELECT a.id, j.key, json_extract(j.value, '$.id'), json_extract(j.value, '$.weight')
FROM adapters a, json_each(a.lineage) j
WHERE json_type(a.lineage) = 'array'
  AND json_type(j.value, '$.id') = 'integer'
  AND json_type(j.value, '$.weight') IN ('integer', 'real')
  AND EXISTS (SELECT 1 FROM adapters p WHERE p.id = json_extract(j.value, '$.id'));
UPDATE adapters SET tensors_bytes = length(tensors) WHERE tensors IS NOT NULL;
`;

function migrateAdapterParents(db: Database): void {
  db.exec(adapterParents);
  db.exec(copyLineage);
  // File-backed tensors live under the data dir, which holds studio.db (AdaptersRepo's dataDir). A
  // file missing now counts 0 bytes, as the listing reported before.
  const file = db.prepare(`SELECT file FROM pragma_database_list WHERE name = 'main'`).pluck().get() as string;
  const rows = db.prepare('SELECT id, tensors_path FROM adapters WHERE tensors_path IS NOT NULL').all() as {
    id: number;
    tensors_path: string;
  }[];
  const setBytes = db.prepare('UPDATE adapters SET tensors_bytes = ? WHERE id = ?');
  const sizeOf = (rel: string): number => {
    try {
      return file ? (statSync(join(dirname(file), rel), { throwIfNoEntry: false })?.size ?? 0) : 0;
    } catch {
      return 0; // unreadable: loading it reports why
    }
  };
  for (const r of rows) setBytes.run(sizeOf(r.tensors_path), r.id);
  db.exec('ALTER TABLE adapters DROP COLUMN lineage');
}

// Version 4: trajectories as the studio records them, settings, and verifier tests.
// `trajectories` is rebuilt: a row may have no skill (Playground, the `base` model) and names the
// skill version it ran with by snapshot (name, n, sha256) as well as by link, so a row imported from
// another library keeps its skill's text (`skill_text`, only when there is no link). Rows of version
// 3 (none was ever written) are carried over as source `synth`, their provenance as `details`; messages
// that are not a list of {role, content} turns move to `details.legacy_messages` (messages: []).
const trajectoriesV4 = `
CREATE TABLE trajectories_v4 (
  id               INTEGER PRIMARY KEY,
  uid              TEXT NOT NULL UNIQUE CHECK (length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'),
  source           TEXT NOT NULL CHECK (source IN ('compare', 'playground', 'openai', 'eval', 'evolve', 'synth')),
  skill_version_id INTEGER REFERENCES skill_versions(id),
  skill_name       TEXT,
  skill_version    INTEGER CHECK (skill_version >= 1),
  skill_sha256     TEXT CHECK (length(skill_sha256) = 64),
  skill_text       TEXT,
  condition        TEXT CHECK (condition IN ('none', 'in_context', 'parametric', 'wrong_skill', 'adapter')),
  adapter_key      TEXT CHECK (length(adapter_key) = 64),
  bundle_name      TEXT,
  bundle_sha256    TEXT CHECK (length(bundle_sha256) = 64),
  sampling         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(sampling) AND json_type(sampling) = 'object'),
  messages         TEXT NOT NULL CHECK (json_valid(messages) AND json_type(messages) = 'array'),
  verdict          TEXT CHECK (verdict IS NULL OR (json_valid(verdict) AND json_type(verdict) = 'object')),
  rating           TEXT CHECK (rating IN ('up', 'down')),
  rating_note      TEXT,
  rated_at         TEXT,
  details          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details) AND json_type(details) = 'object'),
  created_at       TEXT NOT NULL,
  CHECK ((skill_name IS NULL) = (skill_version IS NULL) AND (skill_name IS NULL) = (skill_sha256 IS NULL)),
  CHECK (skill_name IS NOT NULL OR (skill_version_id IS NULL AND skill_text IS NULL)),
  CHECK (skill_name IS NULL OR (skill_version_id IS NULL) <> (skill_text IS NULL)),
  CHECK ((bundle_name IS NULL) = (bundle_sha256 IS NULL)),
  CHECK (rating IS NOT NULL OR (rating_note IS NULL AND rated_at IS NULL))
);
INSERT INTO trajectories_v4 (id, uid, source, skill_version_id, skill_name, skill_version, skill_sha256, messages, details, created_at)
SELECT id, lower(hex(randomblob(16))), 'synth', skill_version_id, name, n, sha256,
       CASE WHEN chat THEN messages ELSE '[]' END,
       CASE WHEN chat THEN details ELSE json_set(details, '$.legacy_messages', json(messages)) END,
       created_at
FROM (
  SELECT t.id, t.skill_version_id, s.name, v.n, v.sha256, t.messages, t.created_at,
         CASE WHEN json_type(t.provenance) = 'object' THEN t.provenance ELSE json_object('provenance', json(t.provenance)) END AS details,
         json_type(t.messages) = 'array' AND NOT EXISTS (
           SELECT 1 FROM json_each(t.messages) m
           WHERE m.type <> 'object'
              OR json_extract(m.value, '$.role') NOT IN ('system', 'user', 'assistant', 'tool')
              OR json_type(m.value, '$.content') IS NOT 'text'
              OR (SELECT COUNT(*) FROM json_each(m.value)) <> 2
         ) AS chat
  FROM trajectories t JOIN skill_versions v ON v.id = t.skill_version_id JOIN skills s ON s.id = v.skill_id
);
DROP TABLE trajectories;
ALTER TABLE trajectories_v4 RENAME TO trajectories;
CREATE INDEX trajectories_skill_version ON trajectories(skill_version_id);
CREATE INDEX trajectories_skill_name ON trajectories(skill_name, skill_version);
CREATE INDEX trajectories_created ON trajectories(created_at, id);

CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL CHECK (json_valid(value)),
  updated_at TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE skill_tests (
  skill_version_id INTEGER PRIMARY KEY REFERENCES skill_versions(id) ON DELETE CASCADE,
  tests            TEXT NOT NULL CHECK (json_valid(tests) AND json_type(tests) = 'array'),
  updated_at       TEXT NOT NULL
);
`;

// Version 5: evolve runs and every candidate they scored. A candidate row is written
// (with its text and its diff against its parent) before it is scored; its scores land in one later
// write, so a row has all of them or none, and a resumed run scores exactly the rows without.
const evolveRuns = `
CREATE TABLE evolve_runs (
  id               INTEGER PRIMARY KEY,
  uid              TEXT NOT NULL UNIQUE CHECK (length(uid) = 12 AND uid NOT GLOB '*[^0-9a-f]*'),
  skill_version_id INTEGER NOT NULL REFERENCES skill_versions(id) ON DELETE CASCADE,
  generator        TEXT NOT NULL CHECK (generator IN ('offline', 'llm')),
  iterations       INTEGER NOT NULL CHECK (iterations >= 1),
  per_iteration    INTEGER NOT NULL CHECK (per_iteration >= 1),
  seed             INTEGER NOT NULL,
  modes            TEXT NOT NULL CHECK (json_valid(modes) AND json_type(modes) = 'array'),
  max_tokens       INTEGER NOT NULL CHECK (max_tokens >= 1),
  accept           INTEGER NOT NULL CHECK (accept IN (0, 1)),
  bundle_sha256    TEXT CHECK (length(bundle_sha256) = 64),
  status           TEXT NOT NULL CHECK (status IN ('running', 'cancelled', 'failed', 'done')),
  error            TEXT,
  result_version   INTEGER CHECK (result_version >= 1),
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX evolve_runs_skill ON evolve_runs(skill_version_id);

CREATE TABLE evolve_candidates (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES evolve_runs(id) ON DELETE CASCADE,
  iteration   INTEGER NOT NULL CHECK (iteration >= 0),
  idx         INTEGER NOT NULL CHECK (idx >= 0),
  parent_id   INTEGER REFERENCES evolve_candidates(id),
  operator    TEXT NOT NULL,
  note        TEXT NOT NULL DEFAULT '',
  content     TEXT NOT NULL,
  sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
  diff        TEXT NOT NULL,
  score       REAL CHECK (score >= 0 AND score <= 1),
  scores      TEXT CHECK (scores IS NULL OR (json_valid(scores) AND json_type(scores) = 'object')),
  status      TEXT NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'accepted', 'rejected')),
  version     INTEGER CHECK (version >= 1),
  created_at  TEXT NOT NULL,
  scored_at   TEXT,
  UNIQUE (run_id, iteration, idx),
  CHECK ((score IS NULL) = (scores IS NULL) AND (score IS NULL) = (scored_at IS NULL)),
  CHECK ((status = 'accepted') = (version IS NOT NULL))
);
`;

// Version 6: continual runs and their episodes. An episode row is written with the global
// version its lesson made, in the same transaction as that write, and its measurement lands in one
// later write: a resumed run neither absorbs a lesson twice nor measures a measured episode again.
const continualRuns = `
CREATE TABLE continual_runs (
  id            INTEGER PRIMARY KEY,
  uid           TEXT NOT NULL UNIQUE CHECK (length(uid) = 12 AND uid NOT GLOB '*[^0-9a-f]*'),
  mode          TEXT NOT NULL CHECK (mode IN ('merge', 'cat', 'linear', 'independent', 'in_context')),
  input         TEXT NOT NULL CHECK (json_valid(input) AND json_type(input) = 'object'),
  bundle_sha256 TEXT NOT NULL CHECK (length(bundle_sha256) = 64),
  status        TEXT NOT NULL CHECK (status IN ('running', 'cancelled', 'failed', 'done')),
  error         TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

CREATE TABLE continual_episodes (
  run_id         INTEGER NOT NULL REFERENCES continual_runs(id) ON DELETE CASCADE,
  episode        INTEGER NOT NULL CHECK (episode >= 1),
  world          TEXT NOT NULL,
  lesson_name    TEXT,
  lesson_version INTEGER CHECK (lesson_version >= 1),
  summariser     TEXT,
  global_version INTEGER CHECK (global_version >= 1),
  absorbed_at    TEXT NOT NULL,
  passed         INTEGER CHECK (passed >= 0),
  n              INTEGER CHECK (n >= 0),
  adapter        TEXT,
  passed_tasks   TEXT CHECK (passed_tasks IS NULL OR (json_valid(passed_tasks) AND json_type(passed_tasks) = 'array')),
  truncated      INTEGER CHECK (truncated >= 0),
  ms             REAL CHECK (ms >= 0),
  measured_at    TEXT,
  PRIMARY KEY (run_id, episode),
  CHECK ((lesson_name IS NULL) = (lesson_version IS NULL) AND (lesson_name IS NULL) = (summariser IS NULL)),
  CHECK ((measured_at IS NULL) = (passed IS NULL) AND (passed IS NULL) = (n IS NULL)
     AND (n IS NULL) = (passed_tasks IS NULL) AND (n IS NULL) = (truncated IS NULL) AND (n IS NULL) = (ms IS NULL)),
  CHECK (passed <= n)
);
`;

// Version 8: what was adopted into the Library from a continual run's workspace (docs/store.md
// "adoptions"): a lesson (a new skill and its adapter) or a run's global adapter, under a name and a
// version, with the run, episode and source it came from. Written in the transaction that copies it.
const adoptions = `
CREATE TABLE adoptions (
  id               INTEGER PRIMARY KEY,
  name             TEXT NOT NULL,
  version          INTEGER NOT NULL CHECK (version >= 1),
  kind             TEXT NOT NULL CHECK (kind IN ('lesson', 'global')),
  run_uid          TEXT NOT NULL CHECK (length(run_uid) = 12),
  episode          INTEGER NOT NULL CHECK (episode >= 1),
  source           TEXT NOT NULL CHECK (json_valid(source) AND json_type(source) = 'object'),
  adapter_id       INTEGER NOT NULL REFERENCES adapters(id),
  skill_version_id INTEGER REFERENCES skill_versions(id),
  created_at       TEXT NOT NULL,
  UNIQUE (name, version),
  CHECK ((kind = 'lesson') = (skill_version_id IS NOT NULL))
);
`;

// Version 7: an adapter's name, given by a person (a merge's, or a rename; docs/store.md). Null for
// every existing row: the studio names those from their skill and tier, so old libraries keep working.
const adapterNames = `
ALTER TABLE adapters ADD COLUMN name TEXT CHECK (name IS NULL OR (length(name) BETWEEN 1 AND 120));
`;

// Version 9: an evolve run's best version as compiled with the tier the skill uses (docs/store.md
// "evolve_runs"): instant or distilled, the adapter, and for distilled its accuracy on the skill's tests.
const evolveBest = `
ALTER TABLE evolve_runs ADD COLUMN best_tier TEXT CHECK (best_tier IN ('instant', 'distilled'));
ALTER TABLE evolve_runs ADD COLUMN best_adapter TEXT;
ALTER TABLE evolve_runs ADD COLUMN best_accuracy REAL CHECK (best_accuracy >= 0 AND best_accuracy <= 1);
`;

// Version 10: one name for the hypernetwork's one-pass adapter, `instant` (docs/store.md "Names"):
// recipes of kind `compile` and the `parametric` condition, mode and score key become `instant`.
// Adapter keys do not change (adapter-key.ts hashes an instant recipe under its old kind). The
// trajectories table is rebuilt for its CHECK, as version 4 made it but for that one name.
const instantName = `
UPDATE adapters SET recipe = json_set(recipe, '$.kind', 'instant') WHERE json_extract(recipe, '$.kind') = 'compile';
UPDATE adoptions SET source = json_set(source, '$.recipe.kind', 'instant')
  WHERE json_extract(source, '$.recipe.kind') = 'compile';
UPDATE evolve_runs SET modes = (
  SELECT json_group_array(CASE m.value WHEN 'parametric' THEN 'instant' ELSE m.value END)
  FROM (SELECT value FROM json_each(evolve_runs.modes) ORDER BY key) m
) WHERE EXISTS (SELECT 1 FROM json_each(evolve_runs.modes) WHERE value = 'parametric');
UPDATE evolve_candidates
  SET scores = json_remove(json_set(scores, '$.instant', json(json_extract(scores, '$.parametric'))), '$.parametric')
  WHERE json_type(scores, '$.parametric') IS NOT NULL;

CREATE TABLE trajectories_v10 (
  id               INTEGER PRIMARY KEY,
  uid              TEXT NOT NULL UNIQUE CHECK (length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'),
  source           TEXT NOT NULL CHECK (source IN ('compare', 'playground', 'openai', 'eval', 'evolve', 'synth')),
  skill_version_id INTEGER REFERENCES skill_versions(id),
  skill_name       TEXT,
  skill_version    INTEGER CHECK (skill_version >= 1),
  skill_sha256     TEXT CHECK (length(skill_sha256) = 64),
  skill_text       TEXT,
  condition        TEXT CHECK (condition IN ('none', 'in_context', 'instant', 'wrong_skill', 'adapter')),
  adapter_key      TEXT CHECK (length(adapter_key) = 64),
  bundle_name      TEXT,
  bundle_sha256    TEXT CHECK (length(bundle_sha256) = 64),
  sampling         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(sampling) AND json_type(sampling) = 'object'),
  messages         TEXT NOT NULL CHECK (json_valid(messages) AND json_type(messages) = 'array'),
  verdict          TEXT CHECK (verdict IS NULL OR (json_valid(verdict) AND json_type(verdict) = 'object')),
  rating           TEXT CHECK (rating IN ('up', 'down')),
  rating_note      TEXT,
  rated_at         TEXT,
  details          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(details) AND json_type(details) = 'object'),
  created_at       TEXT NOT NULL,
  CHECK ((skill_name IS NULL) = (skill_version IS NULL) AND (skill_name IS NULL) = (skill_sha256 IS NULL)),
  CHECK (skill_name IS NOT NULL OR (skill_version_id IS NULL AND skill_text IS NULL)),
  CHECK (skill_name IS NULL OR (skill_version_id IS NULL) <> (skill_text IS NULL)),
  CHECK ((bundle_name IS NULL) = (bundle_sha256 IS NULL)),
  CHECK (rating IS NOT NULL OR (rating_note IS NULL AND rated_at IS NULL))
);
INSERT INTO trajectories_v10 (id, uid, source, skill_version_id, skill_name, skill_version, skill_sha256, skill_text,
  condition, adapter_key, bundle_name, bundle_sha256, sampling, messages, verdict, rating, rating_note, rated_at,
  details, created_at)
SELECT id, uid, source, skill_version_id, skill_name, skill_version, skill_sha256, skill_text,
  CASE condition WHEN 'parametric' THEN 'instant' ELSE condition END, adapter_key, bundle_name, bundle_sha256,
  sampling, messages, verdict, rating, rating_note, rated_at, details, created_at
FROM trajectories;
`;

const trajectoriesSwap = `
DROP TABLE trajectories;
ALTER TABLE trajectories_v10 RENAME TO trajectories;
CREATE INDEX trajectories_skill_version ON trajectories(skill_version_id);
CREATE INDEX trajectories_skill_name ON trajectories(skill_name, skill_version);
CREATE INDEX trajectories_created ON trajectories(created_at, id);
`;

/** Rewrites, checks that every row came over and no old name is left, then swaps the table in. */
function migrateInstantName(db: Database): void {
  const count = (sql: string) => db.prepare(sql).pluck().get() as number;
  const before = count('SELECT COUNT(*) FROM trajectories');
  db.exec(instantName);
  const left = {
    'trajectories copied': before - count('SELECT COUNT(*) FROM trajectories_v10'),
    "recipes of kind 'compile'": count(
      `SELECT COUNT(*) FROM adapters WHERE json_extract(recipe, '$.kind') = 'compile'`,
    ),
    "adoptions of kind 'compile'": count(
      `SELECT COUNT(*) FROM adoptions WHERE json_extract(source, '$.recipe.kind') = 'compile'`,
    ),
    "evolve modes 'parametric'": count(
      `SELECT COUNT(*) FROM evolve_runs r, json_each(r.modes) m WHERE m.value = 'parametric'`,
    ),
    "evolve scores 'parametric'": count(
      `SELECT COUNT(*) FROM evolve_candidates WHERE json_type(scores, '$.parametric') IS NOT NULL`,
    ),
  };
  for (const [what, n] of Object.entries(left)) if (n !== 0) throw new Error(`${what}: ${n} rows differ`);
  db.exec(trajectoriesSwap);
}

export const migrations: readonly Migration[] = [
  { version: 1, name: 'initial schema', up: (db) => db.exec(initialSchema) },
  { version: 2, name: 'global adapter per bundle', up: migrateGlobalPerBundle },
  { version: 3, name: 'adapter parents table', up: migrateAdapterParents },
  { version: 4, name: 'trajectories, settings and skill tests', up: (db) => db.exec(trajectoriesV4) },
  { version: 5, name: 'evolve runs and candidates', up: (db) => db.exec(evolveRuns) },
  { version: 6, name: 'continual runs and episodes', up: (db) => db.exec(continualRuns) },
  { version: 7, name: 'adapter names', up: (db) => db.exec(adapterNames) },
  { version: 8, name: 'adoptions from continual runs', up: (db) => db.exec(adoptions) },
  { version: 9, name: "evolve runs' best version compiled", up: (db) => db.exec(evolveBest) },
  { version: 10, name: 'instant, one name for the one-pass adapter', up: migrateInstantName },
];

/** The schema version this build writes; a database above it was written by a newer build. */
export const SCHEMA_VERSION = migrations.at(-1)?.version ?? 0;
