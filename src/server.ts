import type { ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import type { Config } from './config/config.js';
import { isLoopback } from './config/config.js';
import { openDb, type DB } from './store/db.js';
import { WriterClient } from './store/writer-client.js';
import { HeadPool } from './store/head-pool.js';
import { PinnedStores } from './store/pinned-stores.js';
import { TokenVerifier, createStoredToken, readTokenFile, storedTokenCount } from './auth/tokens.js';
import { loadBuildInfo } from './util/build-info.js';
import { cleanSpool } from './jobs/upload.js';
import { readPidFile, removePidFile, writePidFile } from './util/pid-file.js';
import type { AppContext } from './http/context.js';

import { StartupError } from './util/startup-error.js';
export { StartupError };

/** A connection with no traffic either way for this long is closed. */
const IDLE_SOCKET_MS = 300_000;

export interface RunningServer {
  url: string;
  port: number;
  ctx: AppContext;
  close(): Promise<void>;
}

/** Resolves the tokens this server accepts; on a fresh loopback server, creates one and prints it once. */
function setupTokens(config: Config, db: DB, log: Logger, announce: (token: string) => void): TokenVerifier {
  const configured: string[] = [];
  if (config.token) configured.push(config.token);
  if (config.tokenFile) configured.push(readTokenFile(config.tokenFile));
  if (configured.length === 0 && storedTokenCount(db) === 0) {
    if (!isLoopback(config.host)) {
      throw new StartupError(
        `refusing to listen on ${config.host} without an API token: set STACKD_TOKEN, token_file, or run "stackd token create --data-dir ${config.dataDir}" first`,
      );
    }
    announce(createStoredToken(db, 'generated at first start'));
    log.info('generated the first API token (shown once above; only its hash is stored)');
  }
  return TokenVerifier.fromDb(db, configured);
}

export async function startServer(config: Config, opts: { log?: Logger; announceToken?: (t: string) => void } = {}): Promise<RunningServer> {
  const log = opts.log ?? pino({ level: config.logLevel, base: { service: 'stackd' } });
  const t0 = performance.now();
  const other = readPidFile(config.dataDir);
  if (other !== null && other !== process.pid) {
    throw new StartupError(`${config.dataDir} is in use by another stackd process (pid ${other}); stop it first or use another data directory`);
  }
  let db: DB;
  try {
    db = openDb(config.dataDir); // runs migrations before any worker opens the file
  } catch (e) {
    throw new StartupError(`cannot open the data directory ${config.dataDir}: ${(e as Error).message}`);
  }
  const tokens = setupTokens(config, db, log, opts.announceToken ?? ((t) => process.stderr.write(`\nAPI token (shown once, store it now): ${t}\n\n`)));
  cleanSpool(db, config.dataDir);
  writePidFile(config.dataDir);
  db.close();
  const readDb = openDb(config.dataDir, { readonly: true });

  let ready = false;
  let servedAtSeq = 0;
  const writer = new WriterClient(config.dataDir, config.iriBase, config.jobRetentionDays * 86_400_000, (e) => {
    if (e.event === 'jobError') log.error({ error: e.message }, 'import job group failed; retrying');
    if (e.event === 'replicaLost') log.warn({ replica: e.replicaId, reason: e.message }, 'head replica lost');
    if (e.event === 'published') servedAtSeq = Math.max(servedAtSeq, e.seq);
  }, (e) => {
    // Without its writer the server cannot accept writes; everything acknowledged is in
    // SQLite, so exit and let the supervisor (or the operator) start it again.
    log.fatal({ error: e.message }, 'the writer stopped unexpectedly; exiting');
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100);
  });
  const heads = new HeadPool(writer, {
    replicas: config.queryWorkers,
    queryTimeoutMs: config.queryTimeoutMs,
    log: (msg, extra) => log.info(extra ?? {}, msg),
  });
  const pinned = new PinnedStores({
    dataDir: config.dataDir,
    maxBytes: config.pinnedCacheBytes,
    maxStores: config.pinnedStoresMax,
    queryTimeoutMs: config.queryTimeoutMs,
    log: (msg, extra) => log.info(extra ?? {}, msg),
  });
  // Replicas start loading now, while this thread imports the HTTP layer (a restart's
  // first query waits for both, so they overlap instead of adding up).
  const headsBuilt = heads.start();
  headsBuilt.catch(() => undefined); // awaited below, after listening
  const [{ serve }, { createApp }] = await Promise.all([import('@hono/node-server'), import('./http/app.js')]);
  const ctx: AppContext = {
    config, readDb, heads, writer, tokens, build: loadBuildInfo(), log, pinned,
    isReady: () => ready,
    servedAtSeq: () => servedAtSeq,
  };
  const app = createApp(ctx);

  const server: ServerType = await new Promise((resolve, reject) => {
    // No cap on a whole request's duration (Node's default is 300 s): a durable import's upload
    // may stream for longer than that. A connection that goes silent is still closed (setTimeout below).
    const s = serve({ fetch: app.fetch, hostname: config.host, port: config.port, serverOptions: { requestTimeout: 0 } }, () => resolve(s));
    s.setTimeout(IDLE_SOCKET_MS);
    s.once('error', (e: NodeJS.ErrnoException) =>
      reject(new StartupError(`cannot listen on ${config.host} port ${config.port}: ${e.code === 'EADDRINUSE' ? 'the port is already in use' : e.message}`)));
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  log.info({ url, port, data_dir: config.dataDir, graph: config.graph, branch: config.branch }, 'listening');

  await headsBuilt;
  // Everything durable at start is what the replicas loaded: that is the published state.
  servedAtSeq = heads.headSeq;
  ready = true;
  log.info({ startup_ms: Math.round(performance.now() - t0) }, 'ready');

  return {
    url,
    port,
    ctx,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await heads.close();
      await pinned.close();
      await writer.close();
      readDb.close();
      removePidFile(config.dataDir);
    },
  };
}
