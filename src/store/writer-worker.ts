/**
 * The single writer: owns the read-write SQLite connection and the replicas' write ports.
 * Requests from the main thread are handled strictly one after another, so commit_seq is
 * gap-free and increasing and no two writes interleave.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDb } from './db.js';
import { WriteCoordinator, WriteFailure } from './write-tx.js';
import { importRdf } from './rdf-import.js';
import { Checkpointer } from './checkpointer.js';
import { commitGroup, commitTriplets, deleteGraph, importNdjson, reload, retract } from './triplet-writes.js';
import { Iris } from '../model/triplets.js';
import { JobRunner } from '../jobs/job-runner.js';
import { ApiError } from '../http/errors.js';
import type { WriterEvent, WriterFailure, WriterReplies, WriterReply, WriterRequest } from './writer-protocol.js';

const { dataDir, iriBase, jobRetentionMs } = workerData as { dataDir: string; iriBase: string; jobRetentionMs: number };
const db = openDb(dataDir);
const port = parentPort!;
const emit = (e: WriterEvent) => port.postMessage(e);
const iris = new Iris(iriBase);
let runner: JobRunner;
const coordinator = new WriteCoordinator(db, (replicaId, message) => emit({ event: 'replicaLost', replicaId, message }));
const checkpointer = new Checkpointer(dataDir, db);
coordinator.requestCheckpoint = () => checkpointer.request();

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
    case 'createJob': {
      const out = runner.create(req.input);
      scheduleJobStep();
      return out;
    }
    case 'cancelJob':
      return runner.cancel(req.jobId);
    case 'close':
      closed = true;
      await checkpointer.close();
      db.close();
      return null;
  }
}

function toFailure(e: unknown): WriterFailure {
  if (e instanceof WriteFailure) {
    return { status: e.status, type: e.status >= 500 ? 'api_error' : 'invalid_request_error', code: e.code, message: e.message, param: e.param, retryable: e.retryable };
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
    pending.push({ op: 'checkpoint' });
    void pump();
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

/*
 * The work queue. Requests run one at a time, in arrival order; consecutive single commits
 * waiting together run as one group (one transaction, one fsync, a commit_seq each).
 */
type Job = WriterRequest | { op: 'checkpoint' } | { op: 'jobStep' };
const pending: Job[] = [];
let busy = false;
const MAX_GROUP = 256;

const groupable = (j: Job): j is Extract<WriterRequest, { op: 'commit' }> => j.op === 'commit' && !j.dryRun;

async function runOne(req: WriterRequest) {
  let reply: WriterReply;
  try {
    reply = { id: req.id, ok: true, result: await handle(req) };
    if (publishes(req)) schedulePublication();
  } catch (e) {
    if (coordinator.isOpen) await coordinator.abort().catch(() => undefined);
    reply = { id: req.id, ok: false, error: toFailure(e) };
  }
  port.postMessage(reply);
}

async function runGroup(reqs: Extract<WriterRequest, { op: 'commit' }>[]) {
  let results: unknown[];
  try {
    results = await commitGroup(coordinator, iris, reqs.map((r) => ({ file: r.file, key: r.key })));
  } catch (e) {
    if (coordinator.isOpen) await coordinator.abort().catch(() => undefined);
    const failure = toFailure(e);
    port.postMessage({ replies: reqs.map((r): WriterReply => ({ id: r.id, ok: false, error: failure })) } satisfies WriterReplies);
    return;
  }
  // One message for the group: each postMessage costs more than a small commit's reply.
  const replies = reqs.map((r, i): WriterReply => {
    const out = results[i];
    return out instanceof WriteFailure ? { id: r.id, ok: false, error: toFailure(out) } : { id: r.id, ok: true, result: out };
  });
  port.postMessage({ replies } satisfies WriterReplies);
  schedulePublication();
}

function checkpoint() {
  // Everything committed so far is in the WAL the checkpoint folds.
  const seq = coordinator.headSeq();
  checkpointer.request((done) => {
    if (done) emit({ event: 'published', seq });
    // else: a reader held it back; the next write's publication tries again
  });
}

async function pump() {
  if (busy) return;
  busy = true;
  try {
    while (pending.length) {
      const job = pending.shift()!;
      if (job.op === 'checkpoint') checkpoint();
      else if (job.op === 'jobStep') await jobStep();
      else if (groupable(job) && pending.length > 0 && groupable(pending[0]!)) {
        const group = [job];
        while (group.length < MAX_GROUP && pending.length && groupable(pending[0]!)) group.push(pending.shift() as typeof job);
        await runGroup(group);
      } else await runOne(job);
    }
  } finally {
    busy = false;
  }
}

/*
 * Durable import jobs advance one group per queue turn, so requests that arrive meanwhile
 * are served between groups instead of waiting for the whole job.
 */
let jobStepQueued = false;
let closed = false;
function scheduleJobStep() {
  if (jobStepQueued) return;
  jobStepQueued = true;
  // Through the event loop: a step may never leave the microtask queue (no replica to wait
  // for), and requests that arrived meanwhile (a cancel, a shutdown) must be queued first.
  setImmediate(() => {
    pending.push({ op: 'jobStep' });
    void pump();
  });
}

async function jobStep() {
  jobStepQueued = false;
  if (closed) return;
  let worked = false;
  try {
    worked = await runner.step();
  } catch (e) {
    if (coordinator.isOpen) await coordinator.abort().catch(() => undefined);
    // A failed group is retried on the next turn; the job's offset did not move.
    emit({ event: 'jobError', message: (e as Error).message });
    await new Promise((r) => setTimeout(r, 1000));
    worked = true;
  }
  if (worked) {
    schedulePublication();
    scheduleJobStep();
  } else {
    runner.prune();
  }
}

runner = new JobRunner(coordinator, iris, dataDir, jobRetentionMs);
// Jobs that were queued or running when the process stopped resume from their last group.
scheduleJobStep();

port.on('message', (req: WriterRequest) => {
  pending.push(req);
  void pump();
});
