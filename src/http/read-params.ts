import type { AppContext } from './context.js';
import { ApiError, badRequest } from './errors.js';
import { resolvePin } from '../query/pin.js';
import { headSeqOf } from '../store/db.js';
import type { Pin } from '../query/temporal.js';
import type { QueryInput } from '../store/head-pool.js';
import type { QueryReply } from '../store/head-protocol.js';

/** Where a read runs: the head replicas, or a store pinned to a commit and/or valid time. */
export interface QueryTarget {
  pin: Pin;
  head: number;
  query(input: QueryInput): Promise<QueryReply>;
}

/** Read options the hosted plane accepts on query routes. */
export const READ_PARAMS = ['as_of_commit_seq', 'as_of_valid_time', 'entailment', 'consistency', 'min_indexed_seq', 'reason'];

/** Current durable head: the latest commit_seq. */
export function headSeq(ctx: AppContext): number {
  return headSeqOf(ctx.readDb);
}

function oneInt(p: URLSearchParams, name: string): number | null {
  const all = p.getAll(name);
  if (all.length === 0 || all[0] === '') return null;
  if (all.length > 1) throw badRequest('repeated_parameter', `parameter "${name}" was given more than once`, name);
  if (!/^\d+$/.test(all[0]!)) throw badRequest('invalid_parameter', `parameter "${name}" must be a non-negative integer`, name);
  return Number(all[0]);
}

/**
 * Consistency and pinning options. The head is always current, so `strong` and any
 * `min_indexed_seq` up to the head are served at once; a floor past the head is 429
 * read_your_writes_pending. `as_of_commit_seq` / `as_of_valid_time` pick a pinned store;
 * a commit past the head is 400 commit_seq_out_of_range.
 */
export async function checkReadParams(ctx: AppContext, p: URLSearchParams): Promise<QueryTarget> {
  const consistency = p.get('consistency');
  if (consistency !== null && consistency !== '' && consistency !== 'eventual' && consistency !== 'strong') {
    throw badRequest('invalid_parameter', 'parameter "consistency" must be eventual or strong', 'consistency');
  }
  const entailment = p.get('entailment');
  if (entailment !== null && entailment !== '' && entailment !== 'none' && entailment !== 'subclass') {
    throw badRequest('invalid_parameter', 'parameter "entailment" must be none or subclass', 'entailment');
  }
  if (entailment === 'subclass') {
    throw new ApiError(409, 'invalid_request_error', 'entailment_unavailable',
      'no reasoned (subclass) projection is available on this server; query with entailment=none', { param: 'entailment' });
  }
  const reason = p.get('reason');
  if (reason === 'true') {
    throw new ApiError(409, 'invalid_request_error', 'reasoning_unavailable', 'this server stores no inference rules; query without reason=true', { param: 'reason' });
  }
  const head = headSeq(ctx);
  const floor = oneInt(p, 'min_indexed_seq');
  if (floor !== null && floor > head) {
    throw new ApiError(429, 'rate_limit_error', 'read_your_writes_pending',
      `min_indexed_seq ${floor} is past the head (commit_seq ${head}); retry once that commit exists`, { param: 'min_indexed_seq', retryable: true, retryAfterSeconds: 1 });
  }
  const pinned = resolvePin(ctx.readDb, {
    as_of_commit_seq: oneInt(p, 'as_of_commit_seq') ?? undefined,
    as_of_valid_time: p.get('as_of_valid_time') ?? undefined,
  }, head);
  const pin = pinned.pin;
  return {
    pin,
    head: pinned.head,
    query: pin.pinned ? (input: QueryInput) => ctx.pinned.query(pin, input) : (input: QueryInput) => ctx.heads.query(input),
  };
}
