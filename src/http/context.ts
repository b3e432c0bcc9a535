import type { Config } from '../config/config.js';
import type { DB } from '../store/db.js';
import type { HeadPool } from '../store/head-pool.js';
import type { WriterClient } from '../store/writer-client.js';
import type { TokenVerifier } from '../auth/tokens.js';
import type { BuildInfo } from '../util/build-info.js';
import type { Logger } from 'pino';
import type { PinnedStores } from '../store/pinned-stores.js';

/** Everything a route needs, built once at start-up. */
export interface AppContext {
  config: Config;
  /** Main-thread read-only connection for small reads (never a scan of the statements). */
  readDb: DB;
  heads: HeadPool;
  writer: WriterClient;
  tokens: TokenVerifier;
  build: BuildInfo;
  log: Logger;
  /** True once every head replica has loaded the durable state. */
  isReady: () => boolean;
  /** The checkpoint ("published") watermark: the last commit folded into the database file. */
  servedAtSeq: () => number;
  pinned: PinnedStores;
}

export const API_VERSION = '2026-07-23';
