import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { SCHEMA_VERSION } from '../store/db.js';

export interface BuildInfo {
  version: string;
  gitCommit: string;
  builtAt: string;
  persistedFormat: string;
}

/** Build identity written by scripts/write-build-info.mjs at `npm run build`. */
export function loadBuildInfo(): BuildInfo {
  let info: { version?: string; git_commit?: string; built_at?: string } = {};
  try {
    info = JSON.parse(readFileSync(new URL('../../build-info.json', import.meta.url), 'utf8'));
  } catch {
    /* running from an unbuilt tree */
  }
  // The fingerprint changes whenever any persisted format changes: SQLite schema, canonical term form.
  const formats = { sqlite_schema: SCHEMA_VERSION, canonical_terms: 1 };
  const persistedFormat = 'stackd-' + createHash('sha256').update(JSON.stringify(formats)).digest('hex').slice(0, 16);
  return {
    version: info.version ?? '0.0.0',
    gitCommit: info.git_commit ?? 'unknown',
    builtAt: info.built_at ?? new Date(0).toISOString(),
    persistedFormat,
  };
}
