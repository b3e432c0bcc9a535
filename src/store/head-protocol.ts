/** Messages between the writer, the main thread and head replicas (worker threads). */
import { ApiError } from '../http/errors.js';

export interface QueryRequest {
  op: 'query';
  id: number;
  query: string;
  /** Media type Oxigraph serialises the result in. */
  resultsFormat: string;
  defaultGraphs?: string[];
  namedGraphs?: string[];
  union: boolean;
  baseIri?: string;
}

export type QueryReply =
  | { id: number; ok: true; body: string; seq: number }
  | { id: number; ok: false; kind: 'syntax' | 'evaluation' | 'format'; message: string };

/**
 * Head replica → main thread, instead of a reply: the query was dropped before it started
 * (after a QueryCancel). When a query starts is in the replica's QueryClock, not a message.
 */
export interface QueryProgress {
  id: number;
  progress: 'cancelled';
}

/** The answer to a query past query_timeout_ms: one that ran that long, or one still waiting its turn. */
export function queryTimeoutError(limitMs: number, started: boolean): ApiError {
  const limit = `query_timeout_ms (${limitMs} ms)`;
  const message = started
    ? `the query ran longer than ${limit} and was cancelled`
    : `the query waited longer than ${limit} for a write in progress or for queries ahead of it, and was not run; retry shortly`;
  return new ApiError(503, 'api_error', 'query_timeout', message, { retryable: true, retryAfterSeconds: 1 });
}

/** Main thread → head replica: drop this query if it has not started. */
export interface QueryCancel {
  op: 'cancel';
  id: number;
}

/** Writer → head, over the replica's write port. */
export type HeadWriteMessage =
  | { op: 'build'; dataDir: string }
  | { op: 'begin'; seq: number }
  /** `text`: N-Quads without blank nodes (bulk load); `bnText`: N-Quads with blank nodes (term by term, labels kept). */
  | { op: 'load'; text: string; bnText: string }
  | { op: 'unload'; text: string; bnText: string }
  /** Empty the store (graph delete); an abort reloads what the write removed. */
  | { op: 'clear' }
  /** All loads of the open write are in: confirm (or report a refusal) before the writer commits SQLite. */
  | { op: 'prepare'; seq: number }
  /** SQLite committed: make the write visible. No reply (see head-worker). */
  | { op: 'commit'; seq: number }
  | { op: 'abort'; seq: number }
  /** Several of the above, handled in order; at most the last one is answered. */
  | { op: 'batch'; msgs: HeadWriteMessage[] };

/** Head → writer. */
export type HeadWriteReply =
  | { op: 'built'; seq: number; size: number; ms: number }
  | { op: 'prepared'; seq: number }
  | { op: 'acked'; seq: number }
  /** `fatal`: the replica's engine broke (out of memory); it exits and is rebuilt from SQLite. */
  | { op: 'failed'; message: string; fatal?: boolean };
