/** The query mix as exchanged between the suite and its client processes (a JSON file). */
import { readFileSync } from 'node:fs';
import type { MixQuery } from '../bsbm/queries.js';

export interface MixFile {
  /** One warm-up round, not timed (12 queries). */
  warmup: MixQuery[];
  /** The timed queries, in order. */
  queries: MixQuery[];
}

export const readMix = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as MixFile;

/** Result size of a response body, for checking that systems answer alike: bindings or triples. */
export function resultSize(accept: string, body: string): number {
  if (accept.includes('json')) {
    const j = JSON.parse(body) as { results?: { bindings: unknown[] }; boolean?: boolean };
    return j.results ? j.results.bindings.length : j.boolean ? 1 : 0;
  }
  return -1; // graph results: counted by the caller with an RDF parser
}

/** Per-query-name timings of one run of the mix. */
export interface MixRun {
  /** Wall-clock time of the timed queries, first sent to last answered. */
  totalMs: number;
  queries: number;
  errors: number;
  firstError: string | null;
  /** Latency (ms) of each timed query, in mix order. */
  latencies: number[];
  /** Result size per query of the warm-up round (bindings for SELECT, triples for graphs). */
  sizes: number[];
  cpuMs?: number;
}
