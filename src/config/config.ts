import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';

/** One typed configuration object; see config.example.toml for every key. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Plain token from STACKD_TOKEN (never written to disk). */
  token: string | null;
  /** Path of a file holding the token (first line). */
  tokenFile: string | null;
  graph: string;
  branch: string;
  queryTimeoutMs: number;
  queryWorkers: number;
  maxImportBytes: number;
  maxQueryBytes: number;
  unionDefaultGraph: boolean;
  /** Memory bound (estimated) of the cache of pinned (as-of) stores. */
  pinnedCacheBytes: number;
  pinnedStoresMax: number;
  /** How long finished import jobs stay readable. */
  jobRetentionDays: number;
  iriBase: string;
  logLevel: string;
  /** Where the config came from, for the start-up log. */
  configFile: string | null;
}

export const DEFAULTS: Omit<Config, 'configFile'> = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: './data',
  token: null,
  tokenFile: null,
  graph: 'main',
  branch: 'main',
  queryTimeoutMs: 30_000,
  queryWorkers: 1,
  maxImportBytes: 64 * 1024 * 1024,
  maxQueryBytes: 1024 * 1024,
  unionDefaultGraph: true,
  pinnedCacheBytes: 1024 * 1024 * 1024,
  pinnedStoresMax: 4,
  jobRetentionDays: 7,
  iriBase: 'https://littlebigbrain.com/',
  logLevel: 'info',
};

type Kind = 'string' | 'int' | 'bool';
/** TOML key → config field, kind and env variable. */
const KEYS: Record<string, { field: keyof Config; kind: Kind; env: string; min?: number; max?: number }> = {
  host: { field: 'host', kind: 'string', env: 'STACKD_HOST' },
  port: { field: 'port', kind: 'int', env: 'STACKD_PORT', min: 0, max: 65535 },
  data_dir: { field: 'dataDir', kind: 'string', env: 'STACKD_DATA_DIR' },
  token_file: { field: 'tokenFile', kind: 'string', env: 'STACKD_TOKEN_FILE' },
  graph: { field: 'graph', kind: 'string', env: 'STACKD_GRAPH' },
  branch: { field: 'branch', kind: 'string', env: 'STACKD_BRANCH' },
  query_timeout_ms: { field: 'queryTimeoutMs', kind: 'int', env: 'STACKD_QUERY_TIMEOUT_MS', min: 1 },
  query_workers: { field: 'queryWorkers', kind: 'int', env: 'STACKD_QUERY_WORKERS', min: 1, max: 16 },
  max_import_bytes: { field: 'maxImportBytes', kind: 'int', env: 'STACKD_MAX_IMPORT_BYTES', min: 1 },
  max_query_bytes: { field: 'maxQueryBytes', kind: 'int', env: 'STACKD_MAX_QUERY_BYTES', min: 1 },
  union_default_graph: { field: 'unionDefaultGraph', kind: 'bool', env: 'STACKD_UNION_DEFAULT_GRAPH' },
  pinned_cache_bytes: { field: 'pinnedCacheBytes', kind: 'int', env: 'STACKD_PINNED_CACHE_BYTES', min: 0 },
  pinned_stores_max: { field: 'pinnedStoresMax', kind: 'int', env: 'STACKD_PINNED_STORES_MAX', min: 1, max: 64 },
  job_retention_days: { field: 'jobRetentionDays', kind: 'int', env: 'STACKD_JOB_RETENTION_DAYS', min: 0 },
  iri_base: { field: 'iriBase', kind: 'string', env: 'STACKD_IRI_BASE' },
  log_level: { field: 'logLevel', kind: 'string', env: 'STACKD_LOG_LEVEL' },
};

export class ConfigError extends Error {}

function coerce(key: string, kind: Kind, raw: unknown, source: string, min?: number, max?: number): unknown {
  if (kind === 'string') {
    if (typeof raw !== 'string' || raw === '') throw new ConfigError(`${source}: ${key} must be a non-empty string`);
    return raw;
  }
  if (kind === 'bool') {
    if (typeof raw === 'boolean') return raw;
    if (typeof raw === 'string' && /^(true|false|1|0|yes|no|on|off)$/i.test(raw)) return /^(true|1|yes|on)$/i.test(raw);
    throw new ConfigError(`${source}: ${key} must be true or false`);
  }
  const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : typeof raw === 'bigint' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new ConfigError(`${source}: ${key} must be an integer`);
  if (min !== undefined && n < min) throw new ConfigError(`${source}: ${key} must be >= ${min}`);
  if (max !== undefined && n > max) throw new ConfigError(`${source}: ${key} must be <= ${max}`);
  return n;
}

export interface ConfigSources {
  /** Flags given on the command line, keyed by TOML key (e.g. data_dir). */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  configPath?: string | null;
}

/** Precedence: flag > STACKD_* env > TOML file > defaults. */
export function loadConfig(src: ConfigSources = {}): Config {
  const env = src.env ?? process.env;
  const cfg: Config = { ...DEFAULTS, configFile: null };
  const set = (field: keyof Config, value: unknown) => ((cfg as unknown as Record<string, unknown>)[field] = value);

  const path = src.configPath ?? env.STACKD_CONFIG ?? null;
  if (path) {
    if (!existsSync(path)) throw new ConfigError(`config file not found: ${path}`);
    let doc: Record<string, unknown>;
    try {
      doc = parseToml(readFileSync(path, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      throw new ConfigError(`${path}: ${(e as Error).message}`);
    }
    for (const [k, v] of Object.entries(doc)) {
      const spec = KEYS[k];
      if (!spec) throw new ConfigError(`${path}: unknown key "${k}" (known: ${Object.keys(KEYS).join(', ')})`);
      set(spec.field, coerce(k, spec.kind, v, path, spec.min, spec.max));
    }
    cfg.configFile = resolve(path);
  }
  for (const [k, spec] of Object.entries(KEYS)) {
    const v = env[spec.env];
    if (v !== undefined && v !== '') set(spec.field, coerce(k, spec.kind, v, spec.env, spec.min, spec.max));
  }
  if (env.STACKD_TOKEN) cfg.token = env.STACKD_TOKEN;
  for (const [k, v] of Object.entries(src.flags ?? {})) {
    if (v === undefined) continue;
    const spec = KEYS[k];
    if (!spec) throw new ConfigError(`unknown option ${k}`);
    set(spec.field, coerce(k, spec.kind, v, `--${k.replace(/_/g, '-')}`, spec.min, spec.max));
  }
  if (!cfg.iriBase.endsWith('/') && !cfg.iriBase.endsWith('#')) cfg.iriBase += '/';
  if (!/^[A-Za-z0-9._-]+$/.test(cfg.graph)) throw new ConfigError(`graph name "${cfg.graph}" may only use letters, digits, ., _ and -`);
  if (!/^[A-Za-z0-9._-]+$/.test(cfg.branch)) throw new ConfigError(`branch name "${cfg.branch}" may only use letters, digits, ., _ and -`);
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(cfg.logLevel)) {
    throw new ConfigError(`log_level must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  return cfg;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
