/**
 * Which query a replica thread is running and since when, in shared memory, so the main
 * thread's timeout check reads it instead of the replica posting a "started" message per
 * query (a message each way costs more than a point lookup).
 *
 * Slots (BigInt64 through Atomics, written only by the replica): the id of the query started
 * last, when it started (µs since the epoch, comparable across threads), the id of the query
 * finished last. Query ids increase in dispatch order and a replica runs its queue in order.
 * The start time is stored before the id, so whoever sees the id sees its start time.
 */
import { queryTimeoutError } from './head-protocol.js';

const STARTED_ID = 0;
const STARTED_AT = 1;
const FINISHED_ID = 2;

export type ClockState = { state: 'waiting' } | { state: 'running'; ms: number } | { state: 'done' };

const nowUs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));

export class QueryClock {
  private readonly slots: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(3 * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.slots = new BigInt64Array(buffer);
  }

  /** Replica side. */
  started(id: number) {
    Atomics.store(this.slots, STARTED_AT, nowUs());
    Atomics.store(this.slots, STARTED_ID, BigInt(id));
  }

  /** Replica side, after the reply is posted. */
  finished(id: number) {
    Atomics.store(this.slots, FINISHED_ID, BigInt(id));
  }

  /** Pool side: where query `id` is now. */
  stateOf(id: number): ClockState {
    const q = BigInt(id);
    const started = Atomics.load(this.slots, STARTED_ID);
    if (Atomics.load(this.slots, FINISHED_ID) >= q || started > q) return { state: 'done' }; // or dropped; its message is on the way
    if (started === q) return { state: 'running', ms: Number(nowUs() - Atomics.load(this.slots, STARTED_AT)) / 1000 };
    return { state: 'waiting' };
  }
}

/** A query the pool is waiting on, as the timeout check sees it. */
export interface TimedQuery {
  timer: NodeJS.Timeout;
  /** Already answered with a timeout; kept until the replica lets go of it. */
  answered: boolean;
  reject: (e: Error) => void;
}

/**
 * One timeout check of query `id`. A query has the whole limit from when it started: one
 * that started late is checked again later; one still waiting (queued, or held by a write)
 * is answered with a timeout and cancelled (and checked again in case it started meanwhile);
 * one that ran past the limit is answered, and true is returned: its thread must be ended,
 * since Oxigraph cannot interrupt a query.
 */
export function timeoutCheck(clock: QueryClock, id: number, f: TimedQuery, limitMs: number, recheck: () => void, cancel: () => void): boolean {
  const where = clock.stateOf(id);
  if (where.state === 'done') return false; // its answer is on the way
  if (where.state === 'running' && where.ms < limitMs) {
    f.timer = setTimeout(recheck, limitMs - where.ms + 1);
    return false;
  }
  if (!f.answered) {
    f.answered = true;
    f.reject(queryTimeoutError(limitMs, where.state === 'running'));
  }
  if (where.state === 'waiting') {
    cancel();
    f.timer = setTimeout(recheck, limitMs);
    return false;
  }
  return true;
}
