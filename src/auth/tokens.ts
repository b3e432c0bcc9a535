import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DB } from '../store/db.js';
import { ConfigError } from '../config/config.js';

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function generateToken(): string {
  return 'lbb_sk_live_' + randomBytes(24).toString('base64url');
}

/** Stores a new token's hash; the token itself is returned once and never written anywhere. */
export function createStoredToken(db: DB, label: string): string {
  const token = generateToken();
  db.prepare('INSERT INTO tokens (hash, label, created_at) VALUES (?, ?, ?)').run(
    hashToken(token).toString('hex'),
    label,
    new Date().toISOString(),
  );
  return token;
}

export function storedTokenCount(db: DB): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM tokens').get() as { n: number }).n;
}

/** The token in a token file (its first line); a file that cannot be read or is empty is a configuration error. */
export function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message;
    throw new ConfigError(`token file ${path} cannot be read: ${why}`);
  }
  const token = text.split(/\r?\n/)[0]?.trim() ?? '';
  if (!token) throw new ConfigError(`token file ${path} is empty: its first line must be the API token`);
  return token;
}

/**
 * Checks bearer tokens against the configured token (STACKD_TOKEN / token_file) and the
 * hashes stored in the data directory. Digests are compared with timingSafeEqual, and
 * every candidate is compared, so timing says nothing about which (if any) matched.
 */
export class TokenVerifier {
  private readonly hashes: Buffer[];

  constructor(configured: string[], storedHexHashes: string[]) {
    this.hashes = [...configured.map(hashToken), ...storedHexHashes.map((h) => Buffer.from(h, 'hex'))];
  }

  static fromDb(db: DB, configured: string[]): TokenVerifier {
    const rows = db.prepare('SELECT hash FROM tokens').all() as { hash: string }[];
    return new TokenVerifier(configured, rows.map((r) => r.hash));
  }

  get count(): number {
    return this.hashes.length;
  }

  verify(presented: string): boolean {
    const digest = hashToken(presented);
    let ok = false;
    for (const h of this.hashes) if (timingSafeEqual(h, digest)) ok = true;
    return ok;
  }
}
