import { Worker } from 'node:worker_threads';
import { ApiError } from '../http/errors.js';
import { type QueryCancel, type QueryProgress, type QueryReply, type QueryRequest } from './head-protocol.js';
import type { QueryInput } from './head-pool.js';
import { QueryClock, timeoutCheck } from './query-clock.js';

export interface Pin {
  seq: number;
  validTime: string | null;
}

interface Entry {
  key: string;
  worker: Worker;
  clock: QueryClock;
  ready: Promise<number>;
  statements: number;
  lastUsed: number;
  inflight: Map<number, InFlight>;
}

interface InFlight {
  resolve: (r: QueryReply) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  answered: boolean;
}

/** Rough memory of one store, per statement (ENGINE-NOTES: ≈ 0.6 KB per triple). */
const BYTES_PER_STATEMENT = 650;

export interface PinnedStoresOptions {
  dataDir: string;
  maxBytes: number;
  maxStores: number;
  queryTimeoutMs: number;
  log: (msg: string, extra?: Record<string, unknown>) => void;
}

/**
 * Read-only stores materialised from SQLite for a pin (as_of_commit_seq and/or
 * as_of_valid_time), each in its own worker, kept in an LRU cache bounded by an estimate
 * of their memory. A dropped store's worker is terminated, which returns its memory.
 */
export class PinnedStores {
  private readonly entries = new Map<string, Entry>();
  private nextId = 1;

  constructor(private readonly opts: PinnedStoresOptions) {}

  private keyOf(pin: Pin): string {
    return `${pin.seq}|${pin.validTime ?? ''}`;
  }

  private open(pin: Pin): Entry {
    const key = this.keyOf(pin);
    const existing = this.entries.get(key);
    if (existing) {
      existing.lastUsed = Date.now();
      return existing;
    }
    const clock = new QueryClock();
    const worker = new Worker(new URL('./head-worker.js', import.meta.url), {
      workerData: { pin: { dataDir: this.opts.dataDir, seq: pin.seq, validTime: pin.validTime }, clockBuffer: clock.buffer },
    });
    const entry: Entry = { key, worker, clock, ready: Promise.resolve(0), statements: 0, lastUsed: Date.now(), inflight: new Map() };
    entry.ready = new Promise<number>((resolve, reject) => {
      worker.on('message', (m: { ready?: { size: number; ms: number }; failed?: string } | QueryReply | QueryProgress) => {
        if ('ready' in m && m.ready) {
          entry.statements = m.ready.size;
          this.opts.log('pinned store built', { pin: key, statements: m.ready.size, build_ms: m.ready.ms });
          this.evict(entry);
          return resolve(m.ready.size);
        }
        if ('failed' in m && m.failed) return reject(new Error(m.failed));
        if ('progress' in m) return this.onProgress(entry, m);
        const reply = m as QueryReply;
        const f = entry.inflight.get(reply.id);
        if (!f) return;
        entry.inflight.delete(reply.id);
        clearTimeout(f.timer);
        f.resolve(reply);
      });
      worker.on('error', (e) => reject(e));
      worker.on('exit', () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
        for (const f of entry.inflight.values()) {
          clearTimeout(f.timer);
          if (!f.answered) f.reject(new ApiError(503, 'api_error', 'pinned_store_evicted', 'the pinned store was dropped; retry', { retryable: true, retryAfterSeconds: 1 }));
        }
        reject(new Error('pinned store exited'));
      });
    });
    entry.ready.catch(() => undefined);
    this.entries.set(key, entry);
    return entry;
  }

  /** Drops least recently used stores while the cache is over its bounds (never `keep`). */
  private evict(keep: Entry) {
    const total = () => [...this.entries.values()].reduce((n, e) => n + e.statements * BYTES_PER_STATEMENT, 0);
    const victims = [...this.entries.values()].filter((e) => e !== keep && e.inflight.size === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    while ((this.entries.size > this.opts.maxStores || total() > this.opts.maxBytes) && victims.length) {
      const v = victims.shift()!;
      this.entries.delete(v.key);
      void v.worker.terminate();
    }
  }

  async query(pin: Pin, input: QueryInput): Promise<QueryReply> {
    const entry = this.open(pin);
    await entry.ready; // building the store is not part of the query's time budget
    const req: QueryRequest = { ...input, op: 'query', id: this.nextId++ };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.onTimeout(entry, req.id), this.opts.queryTimeoutMs);
      entry.inflight.set(req.id, { resolve, reject, timer, answered: false });
      entry.worker.postMessage(req);
    });
  }

  /** The store dropped a query it had not started (after a cancel). */
  private onProgress(entry: Entry, m: QueryProgress) {
    const f = entry.inflight.get(m.id);
    if (!f) return;
    clearTimeout(f.timer);
    entry.inflight.delete(m.id);
  }

  /**
   * Past the timeout: a running query's store is dropped (its worker terminated; the next
   * query for the pin builds a fresh one); a query still queued is dropped, the store kept.
   */
  private onTimeout(entry: Entry, queryId: number) {
    const f = entry.inflight.get(queryId);
    if (!f) return;
    const ranPastLimit = timeoutCheck(entry.clock, queryId, f, this.opts.queryTimeoutMs,
      () => this.onTimeout(entry, queryId),
      () => entry.worker.postMessage({ op: 'cancel', id: queryId } satisfies QueryCancel));
    if (!ranPastLimit) return;
    entry.inflight.delete(queryId);
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    void entry.worker.terminate();
  }

  async close() {
    await Promise.all([...this.entries.values()].map((e) => e.worker.terminate()));
    this.entries.clear();
  }
}
