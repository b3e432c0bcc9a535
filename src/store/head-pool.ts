import { MessageChannel, Worker } from 'node:worker_threads';
import { ApiError } from '../http/errors.js';
import { type QueryCancel, type QueryProgress, type QueryReply, type QueryRequest } from './head-protocol.js';
import type { WriterClient } from './writer-client.js';
import { QueryClock, timeoutCheck } from './query-clock.js';

export type QueryInput = Omit<QueryRequest, 'op' | 'id'>;

interface InFlight {
  req: QueryRequest;
  resolve: (r: QueryReply) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** Already answered with a timeout while it waited; kept until the replica lets go of it. */
  answered: boolean;
}

interface Replica {
  id: number;
  worker: Worker;
  clock: QueryClock;
  ready: boolean;
  inflight: Map<number, InFlight>;
}

interface Waiting {
  req: QueryRequest;
  resolve: (r: QueryReply) => void;
  reject: (e: Error) => void;
  deadline: NodeJS.Timeout;
}

export interface HeadPoolOptions {
  replicas: number;
  queryTimeoutMs: number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
}

/**
 * The head replicas (worker threads, each a full Oxigraph store) and query dispatch.
 * A query past the timeout has its replica terminated — Oxigraph cannot interrupt a
 * query — and a fresh replica is rebuilt from SQLite while the others keep serving.
 */
export class HeadPool {
  private readonly replicas = new Map<number, Replica>();
  private nextReplicaId = 1;
  private nextQueryId = 1;
  private readonly waiting: Waiting[] = [];
  private closed = false;
  headSeq = 0;
  /** Back-off before replacing a replica whose build failed (0 after a good build). */
  private respawnDelayMs = 0;

  constructor(
    private readonly writer: WriterClient,
    private readonly opts: HeadPoolOptions,
  ) {}

  /** Starts all replicas; resolves when each has loaded the durable state. */
  async start(): Promise<void> {
    const builds = [];
    for (let i = 0; i < this.opts.replicas; i++) builds.push(this.spawn());
    await Promise.all(builds);
  }

  get readyCount(): number {
    let n = 0;
    for (const r of this.replicas.values()) if (r.ready) n++;
    return n;
  }

  private async spawn(): Promise<void> {
    const id = this.nextReplicaId++;
    const { port1, port2 } = new MessageChannel();
    const clock = new QueryClock();
    const worker = new Worker(new URL('./head-worker.js', import.meta.url), {
      workerData: { writePort: port1, clockBuffer: clock.buffer },
      transferList: [port1],
    });
    const replica: Replica = { id, worker, clock, ready: false, inflight: new Map() };
    this.replicas.set(id, replica);
    worker.on('message', (m: QueryReply | QueryProgress) => ('progress' in m ? this.onProgress(replica, m) : this.onReply(replica, m)));
    worker.on('error', (e) => this.opts.log('head replica error', { replica: id, error: e.message }));
    worker.on('exit', () => this.onExit(replica));
    let built: { seq: number; size: number; ms: number };
    try {
      built = await this.writer.attach(id, port2);
    } catch (e) {
      // A replica that cannot load the durable state is replaced (onExit respawns it,
      // after a pause so a persistent failure does not spin).
      this.opts.log('head replica failed to build; retrying', { replica: id, error: (e as Error).message });
      this.respawnDelayMs = Math.min(30_000, Math.max(1000, this.respawnDelayMs * 2));
      void worker.terminate();
      throw e;
    }
    if (!this.replicas.has(id)) return; // terminated while building
    this.respawnDelayMs = 0;
    replica.ready = true;
    this.headSeq = Math.max(this.headSeq, built.seq);
    this.opts.log('head replica ready', { replica: id, statements: built.size, commit_seq: built.seq, build_ms: built.ms });
    this.drain();
  }

  private onExit(replica: Replica) {
    if (!this.replicas.has(replica.id)) return;
    this.replicas.delete(replica.id);
    // Queries that were queued on it are read-only: run them elsewhere.
    for (const f of replica.inflight.values()) {
      clearTimeout(f.timer);
      if (!f.answered) this.enqueue(f.req, f.resolve, f.reject);
    }
    replica.inflight.clear();
    if (!this.closed) {
      this.opts.log('head replica exited; rebuilding it from durable state', { replica: replica.id });
      setTimeout(() => {
        if (!this.closed) this.spawn().catch(() => undefined);
      }, this.respawnDelayMs);
    }
  }

  private onReply(replica: Replica, reply: QueryReply) {
    const f = replica.inflight.get(reply.id);
    if (!f) return;
    replica.inflight.delete(reply.id);
    clearTimeout(f.timer);
    if (reply.ok) this.headSeq = Math.max(this.headSeq, reply.seq);
    f.resolve(reply);
  }

  /** The replica dropped a query it had not started (after a cancel). */
  private onProgress(replica: Replica, m: QueryProgress) {
    const f = replica.inflight.get(m.id);
    if (!f) return;
    clearTimeout(f.timer);
    replica.inflight.delete(m.id);
  }

  /**
   * A query past the timeout is answered with a retryable error. One that runs has its
   * replica terminated (Oxigraph cannot interrupt a query) and rebuilt in the background;
   * one still waiting — queued behind another query, or held by a write being applied —
   * costs its replica nothing: it is dropped, or if it starts meanwhile, timed from its start.
   */
  private onTimeout(replica: Replica, queryId: number) {
    const f = replica.inflight.get(queryId);
    if (!f) return;
    const ranPastLimit = timeoutCheck(replica.clock, queryId, f, this.opts.queryTimeoutMs,
      () => this.onTimeout(replica, queryId),
      () => replica.worker.postMessage({ op: 'cancel', id: queryId } satisfies QueryCancel));
    if (!ranPastLimit) return;
    replica.inflight.delete(queryId);
    this.opts.log('query timed out; replacing its replica', { replica: replica.id });
    replica.ready = false;
    void replica.worker.terminate();
  }

  query(input: QueryInput): Promise<QueryReply> {
    if (this.closed) return Promise.reject(new ApiError(503, 'api_error', 'shutting_down', 'the server is shutting down'));
    const req: QueryRequest = { ...input, op: 'query', id: this.nextQueryId++ };
    return new Promise((resolve, reject) => this.enqueue(req, resolve, reject));
  }

  private enqueue(req: QueryRequest, resolve: (r: QueryReply) => void, reject: (e: Error) => void) {
    const target = this.pick();
    if (target) return this.dispatch(target, req, resolve, reject);
    const w: Waiting = {
      req,
      resolve,
      reject,
      deadline: setTimeout(() => {
        const i = this.waiting.indexOf(w);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new ApiError(503, 'api_error', 'head_unavailable', 'the query engine is (re)loading the graph; retry shortly', { retryable: true, retryAfterSeconds: 1 }));
      }, this.opts.queryTimeoutMs),
    };
    this.waiting.push(w);
  }

  private pick(): Replica | null {
    let best: Replica | null = null;
    for (const r of this.replicas.values()) {
      if (!r.ready) continue;
      if (!best || r.inflight.size < best.inflight.size) best = r;
    }
    return best;
  }

  private dispatch(replica: Replica, req: QueryRequest, resolve: (r: QueryReply) => void, reject: (e: Error) => void) {
    const timer = setTimeout(() => this.onTimeout(replica, req.id), this.opts.queryTimeoutMs);
    replica.inflight.set(req.id, { req, resolve, reject, timer, answered: false });
    replica.worker.postMessage(req);
  }

  private drain() {
    while (this.waiting.length) {
      const target = this.pick();
      if (!target) return;
      const w = this.waiting.shift()!;
      clearTimeout(w.deadline);
      this.dispatch(target, w.req, w.resolve, w.reject);
    }
  }

  async close() {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.deadline);
      w.reject(new ApiError(503, 'api_error', 'shutting_down', 'the server is shutting down'));
    }
    await Promise.all([...this.replicas.values()].map((r) => r.worker.terminate()));
    this.replicas.clear();
  }
}
