import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export type DB = Database.Database;

/**
 * Versioned migrations. Each runs once, in order, inside a transaction; the applied
 * version is kept in `PRAGMA user_version`. Never edit a released migration: add one.
 */
const MIGRATIONS: string[] = [
  // 1: commit log, statement lifetimes, idempotency records, tokens, metadata.
  `
  CREATE TABLE commits (
    seq            INTEGER PRIMARY KEY,          -- commit_seq: strictly increasing, never reused
    committed_at   TEXT    NOT NULL,             -- RFC 3339, transaction time
    observed_at    TEXT,                         -- RFC 3339 backfill given by the writer
    kind           TEXT    NOT NULL,             -- rdf_import | commit | retract | reload | delete ...
    added          INTEGER NOT NULL,
    removed        INTEGER NOT NULL,
    meta           TEXT                          -- JSON: request parameters worth keeping
  );
  -- One row per statement lifetime: visible at seq N iff added_seq <= N and (removed_seq IS NULL or removed_seq > N).
  -- Terms are in canonical N-Triples syntax; g is '' for the default graph.
  CREATE TABLE quads (
    id          INTEGER PRIMARY KEY,
    s           TEXT    NOT NULL,
    p           TEXT    NOT NULL,
    o           TEXT    NOT NULL,
    g           TEXT    NOT NULL,
    bn          INTEGER NOT NULL,                -- 1 when a term is a blank node (loaded term by term)
    added_seq   INTEGER NOT NULL,
    removed_seq INTEGER
  );
  CREATE UNIQUE INDEX quads_live ON quads(s, p, o, g) WHERE removed_seq IS NULL;
  CREATE INDEX quads_added ON quads(added_seq);
  CREATE INDEX quads_removed ON quads(removed_seq) WHERE removed_seq IS NOT NULL;
  CREATE TABLE idempotency (
    key          TEXT    PRIMARY KEY,
    route        TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    status       INTEGER NOT NULL,
    response     TEXT    NOT NULL,
    commit_seq   INTEGER,
    created_at   TEXT    NOT NULL
  );
  CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    hash       TEXT    NOT NULL UNIQUE,          -- sha256 hex of the token; the token itself is never stored
    label      TEXT,
    created_at TEXT    NOT NULL
  );
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // 2: triplets — entities, observations (evidence), edge events (assert/retract history),
  // entity properties with lifetimes, and valid time on statements.
  `
  ALTER TABLE quads ADD COLUMN valid_from TEXT;  -- RFC 3339; NULL = from the commit's time
  ALTER TABLE quads ADD COLUMN valid_to   TEXT;  -- RFC 3339; NULL = until removed
  CREATE TABLE entities (
    id          TEXT    PRIMARY KEY,             -- 32-hex hash of (type, key) or (type, name)
    type        TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    key         TEXT,
    created_seq INTEGER NOT NULL,
    updated_seq INTEGER NOT NULL
  );
  CREATE INDEX entities_type_name ON entities(type, name);
  CREATE TABLE observations (
    id          INTEGER PRIMARY KEY,
    seq         INTEGER NOT NULL,
    text        TEXT,
    source_id   TEXT,
    observed_at TEXT    NOT NULL
  );
  CREATE INDEX observations_seq ON observations(seq);
  CREATE TABLE edge_events (
    id             INTEGER PRIMARY KEY,
    seq            INTEGER NOT NULL,
    op             TEXT    NOT NULL,             -- assert | retract
    source_id      TEXT    NOT NULL,
    relation       TEXT    NOT NULL,             -- relation name as written
    target_id      TEXT    NOT NULL,
    confidence     REAL    NOT NULL,
    observation_id INTEGER,
    valid_from     TEXT,
    valid_to       TEXT,
    granularity    TEXT,
    source_text    TEXT,
    properties     TEXT,                         -- JSON [{field, value}]
    at             TEXT    NOT NULL,             -- transaction time: observed_at backfill or commit time
    supersedes     TEXT                          -- JSON [edge_event_id]
  );
  CREATE INDEX edge_events_edge ON edge_events(source_id, relation, target_id, seq);
  CREATE INDEX edge_events_target ON edge_events(target_id, seq);
  CREATE INDEX edge_events_seq ON edge_events(seq);
  CREATE TABLE entity_props (
    id          INTEGER PRIMARY KEY,
    entity_id   TEXT    NOT NULL,
    field       TEXT    NOT NULL,                -- canonical (lower-cased) field name
    value       TEXT    NOT NULL,                -- JSON {kind, v}
    added_seq   INTEGER NOT NULL,
    removed_seq INTEGER
  );
  CREATE INDEX entity_props_live ON entity_props(entity_id, field) WHERE removed_seq IS NULL;
  CREATE INDEX entity_props_added ON entity_props(added_seq);
  `,
  // 3: durable import jobs. Progress (the spool byte offset) is updated in the same
  // transaction as each group's commit, so a job resumes exactly where it stopped.
  `
  CREATE TABLE import_jobs (
    id                   TEXT    PRIMARY KEY,
    idempotency_key      TEXT    NOT NULL UNIQUE,
    content_hash         TEXT    NOT NULL,
    state                TEXT    NOT NULL,       -- queued | running | cancellation_requested | cancelled | succeeded | failed
    stage                TEXT    NOT NULL,
    spool                TEXT,                   -- file name under <data_dir>/spool while the job is not terminal
    upload_bytes         INTEGER NOT NULL,
    batch                INTEGER NOT NULL,
    strict               INTEGER NOT NULL,
    observed_at          TEXT,
    bytes_processed      INTEGER NOT NULL DEFAULT 0,
    lines_read           INTEGER NOT NULL DEFAULT 0,
    triplets             INTEGER NOT NULL DEFAULT 0,
    properties           INTEGER NOT NULL DEFAULT 0,
    observations         INTEGER NOT NULL DEFAULT 0,
    groups_committed     INTEGER NOT NULL DEFAULT 0,
    error_count          INTEGER NOT NULL DEFAULT 0,
    errors               TEXT    NOT NULL DEFAULT '[]',
    committed_commit_seq INTEGER,
    failure              TEXT,
    attempts             INTEGER NOT NULL DEFAULT 0,
    enqueued_at          TEXT    NOT NULL,
    updated_at           TEXT    NOT NULL,
    finished_at          TEXT
  );
  CREATE INDEX import_jobs_state ON import_jobs(state, enqueued_at);
  `,
];

/** Version of the persisted format; part of /version's fingerprint. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** SQLite's default: a commit that leaves the WAL past this many pages checkpoints it. */
const WAL_AUTOCHECKPOINT_PAGES = 1000;

export function dbPath(dataDir: string): string {
  return join(dataDir, 'stackd.sqlite');
}

export interface OpenOptions {
  readonly?: boolean;
}

/** Opens the data directory's database in WAL mode with synchronous=FULL, migrating if needed. */
export function openDb(dataDir: string, opts: OpenOptions = {}): DB {
  if (!opts.readonly) mkdirSync(dataDir, { recursive: true });
  const db = new Database(dbPath(dataDir), { readonly: !!opts.readonly, fileMustExist: !!opts.readonly });
  db.pragma('busy_timeout = 10000');
  if (!opts.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // After a bulk import the WAL can reach hundreds of MiB; once folded, give the disk back.
    db.pragma('journal_size_limit = 67108864');
    migrate(db);
  }
  db.pragma('cache_size = -65536'); // 64 MiB page cache: the live-quad index is hot during loads
  return db;
}

/**
 * Runs a write whose COMMIT should not carry a WAL checkpoint: a bulk commit's
 * automatic checkpoint copies every page it wrote back into the database file and fsyncs
 * it, inside COMMIT, before the caller can answer. Here the automatic checkpoint is held
 * back for `write`, and `checkpoint` is asked to fold the WAL afterwards (the writer's
 * checkpointer does it on its own thread). Durability is unchanged: with
 * synchronous=FULL, COMMIT has fsynced the WAL, and a crash before the checkpoint recovers
 * from the WAL.
 */
export async function withDeferredCheckpoint<T>(db: DB, write: () => Promise<T>, checkpoint: () => void): Promise<T> {
  db.pragma('wal_autocheckpoint = 0');
  try {
    return await write();
  } finally {
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    checkpoint();
  }
}

function migrate(db: DB) {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `data directory was written by a newer stackd (schema ${current}, this build knows ${MIGRATIONS.length}); refusing to open it`,
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

const statements = new WeakMap<DB, Map<string, Database.Statement>>();

/** A prepared statement reused per connection: preparing costs more than running a point read. */
export function cachedStatement(db: DB, sql: string): Database.Statement {
  let byText = statements.get(db);
  if (!byText) statements.set(db, (byText = new Map()));
  let st = byText.get(sql);
  if (!st) byText.set(sql, (st = db.prepare(sql)));
  return st;
}

/** The latest commit_seq (0 before the first commit). */
export function headSeqOf(db: DB): number {
  return (cachedStatement(db, 'SELECT COALESCE(MAX(seq), 0) AS seq FROM commits').get() as { seq: number }).seq;
}
