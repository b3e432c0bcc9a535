import { createHash } from 'node:crypto';
import { cachedStatement, type DB } from './db.js';

export interface IdempotencyRecord {
  key: string;
  route: string;
  request_hash: string;
  status: number;
  response: string;
  commit_seq: number | null;
}

/**
 * JSON with object keys sorted at every depth, so equal content hashes equally whatever the
 * key order. (JSON.stringify's array replacer is a whitelist applied at every depth: it would
 * drop every nested field not named at the top, making different bodies hash the same.)
 */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, (x as Record<string, unknown>)[k]]))
      : x,
  );
}

/** Hash of everything that makes two requests "the same": route, parameters, body bytes. */
export function requestHash(route: string, params: unknown, body?: Uint8Array): string {
  const h = createHash('sha256');
  h.update(route);
  h.update('\n');
  h.update(canonicalJson(params));
  h.update('\n');
  if (body) h.update(body);
  return h.digest('hex');
}

export function findIdempotency(db: DB, key: string): IdempotencyRecord | undefined {
  return cachedStatement(db, 'SELECT key, route, request_hash, status, response, commit_seq FROM idempotency WHERE key = ?').get(key) as
    | IdempotencyRecord
    | undefined;
}

export function saveIdempotency(db: DB, rec: IdempotencyRecord): void {
  cachedStatement(
    db,
    'INSERT INTO idempotency (key, route, request_hash, status, response, commit_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(rec.key, rec.route, rec.request_hash, rec.status, rec.response, rec.commit_seq, new Date().toISOString());
}
