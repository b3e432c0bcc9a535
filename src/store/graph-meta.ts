import { cachedStatement, type DB } from './db.js';

/** Records the graph's creation on its first write; true when this call created it. */
export function markGraphCreated(db: DB): boolean {
  const r = cachedStatement(db, "INSERT OR IGNORE INTO meta (key, value) VALUES ('graph_created_at', ?)").run(new Date().toISOString());
  return r.changes === 1;
}

export function graphCreatedAt(db: DB): string | null {
  const r = cachedStatement(db, "SELECT value FROM meta WHERE key = 'graph_created_at'").get() as { value: string } | undefined;
  return r?.value ?? null;
}
