/**
 * The single writer: owns the read-write SQLite connection and the replicas' write ports.
 * Requests from the main thread are handled strictly one after another, so commit_seq is
 * gap-free and increasing and no two writes interleave.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDb } from './db.js';
import { WriteCoordinator, WriteFailure } from './write-tx.js';
import { importRdf } from './rdf-import.js';
import { commitTriplets, deleteGraph, importNdjson, reload, retract } from './triplet-writes.js';
import { Iris } from '../model/triplets.js';
import { ApiError } from '../http/errors.js';
import type { WriterEvent, WriterFailure, WriterReply, WriterRequest } from './writer-protocol.js';

const { dataDir, iriBase } = workerData as { dataDir: string; iriBase: string };
const db = openDb(dataDir);
const port = parentPort!;
const emit = (e: WriterEvent) => port.postMessage(e);
const iris = new Iris(iriBase);
const coordinator = new WriteCoordinator(db, (replicaId, message) => emit({ event: 'replicaLost', replicaId, message }));

async function handle(req: WriterRequest): Promise<unknown> {
  switch (req.op) {
    case 'attach': {
      const link = coordinator.makeLink(req.replicaId, req.port);
      const reply = await link.request({ op: 'build', dataDir });
      if (reply.op !== 'built') throw new Error(`replica ${req.replicaId} failed to build: ${'message' in reply ? reply.message : reply.op}`);
      coordinator.addReplica(link);
      emit({ event: 'replicaReady', replicaId: req.replicaId, seq: reply.seq, size: reply.size, ms: reply.ms });
      return { seq: reply.seq, size: reply.size, ms: reply.ms };
    }
    case 'importRdf':
      return importRdf(coordinator, iriBase, new Uint8Array(req.body), req.params, req.idempotencyKey);
    case 'commit':
      return commitTriplets(coordinator, iris, req.file, req.key, req.dryRun);
    case 'retract':
      return retract(coordinator, iris, req.req, req.key);
    case 'importNdjson':
      return importNdjson(coordinator, iris, new Uint8Array(req.body), req.opts, req.key);
    case 'reload':
      return reload(coordinator, iris, new Uint8Array(req.body), req.opts, req.key);
    case 'deleteGraph':
      return deleteGraph(coordinator, req.key, req.graph);
    case 'close':
      db.close();
      return null;
  }
}

function toFailure(e: unknown): WriterFailure {
  if (e instanceof WriteFailure) {
    return { status: e.status, type: e.status >= 500 ? 'api_error' : 'invalid_request_error', code: e.code, message: e.message, param: e.param };
  }
  if (e instanceof ApiError) {
    return { status: e.status, type: e.type === 'api_error' ? 'api_error' : 'invalid_request_error', code: e.code, message: e.message, param: e.param };
  }
  const err = e as { code?: string; message?: string };
  if (err.code === 'SQLITE_FULL') {
    return { status: 507, type: 'api_error', code: 'storage_full', message: 'the data directory is out of space; nothing was written', retryable: true };
  }
  return { status: 500, type: 'api_error', code: 'write_failed', message: `write failed: ${err.message ?? String(e)}; nothing was written`, retryable: true };
}

/**
 * Publication: after writes, fold the WAL into the database file (a checkpoint) and
 * announce the commit it covers as served_at_seq. Deferred while writes keep coming,
 * and by RDF imports sent with build=false.
 */
let checkpointTimer: NodeJS.Timeout | null = null;
function schedulePublication() {
  if (checkpointTimer) clearTimeout(checkpointTimer);
  checkpointTimer = setTimeout(() => {
    checkpointTimer = null;
    queue = queue.then(() => {
      try {
        db.pragma('wal_checkpoint(PASSIVE)');
        emit({ event: 'published', seq: coordinator.headSeq() });
      } catch {
        /* a busy checkpoint is retried after the next write */
      }
    });
  }, 100);
}

function publishes(req: WriterRequest): boolean {
  switch (req.op) {
    case 'importRdf':
      return req.params.build;
    case 'commit':
      return !req.dryRun;
    case 'retract':
    case 'importNdjson':
    case 'deleteGraph':
      return true;
    case 'reload':
      return !req.opts.dryRun;
    default:
      return false;
  }
}

let queue: Promise<void> = Promise.resolve();
port.on('message', (req: WriterRequest) => {
  queue = queue.then(async () => {
    let reply: WriterReply;
    try {
      reply = { id: req.id, ok: true, result: await handle(req) };
      if (publishes(req)) schedulePublication();
    } catch (e) {
      if (coordinator.isOpen) await coordinator.abort().catch(() => undefined);
      reply = { id: req.id, ok: false, error: toFailure(e) };
    }
    port.postMessage(reply);
  });
});
