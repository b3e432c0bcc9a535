import { headSeqOf, type DB } from '../store/db.js';
import { ApiError, badRequest } from '../http/errors.js';
import type { Pin } from './temporal.js';
import { realCalendarDate } from '../http/params.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;


function instant(v: unknown, param: string): string {
  if (typeof v !== 'string' || !RFC3339.test(v) || Number.isNaN(Date.parse(v)) || !realCalendarDate(v)) {
    throw badRequest('invalid_timestamp', `${param} must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z`, param);
  }
  return new Date(v).toISOString();
}

function seqValue(v: unknown, param: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw badRequest('invalid_parameter', `${param} must be a non-negative integer`, param);
  return n;
}

export interface PinInput {
  as_of_commit_seq?: unknown;
  as_of_valid_time?: unknown;
  /** Transaction-time instant: the graph as it was at that moment. */
  as_of?: unknown;
}

/**
 * A read's pin: knowledge as of a commit (`as_of_commit_seq`, or the last commit at or
 * before `as_of`) and optionally an instant edges must be valid at (`as_of_valid_time`).
 * A commit past the head is a 400 commit_seq_out_of_range.
 */
/** `knownHead`: the head the caller has just read, so it is not read again. */
export function resolvePin(db: DB, input: PinInput, knownHead?: number): { pin: Pin; head: number } {
  const head = knownHead ?? headSeqOf(db);
  let seq = head;
  let pinned = false;
  const has = (v: unknown) => v !== undefined && v !== null && v !== '';
  if (has(input.as_of_commit_seq)) {
    seq = seqValue(input.as_of_commit_seq, 'as_of_commit_seq');
    if (seq > head) {
      throw new ApiError(400, 'invalid_request_error', 'commit_seq_out_of_range',
        `as_of_commit_seq ${seq} is past the head (commit_seq ${head})`, { param: 'as_of_commit_seq' });
    }
    pinned = seq !== head;
  } else if (has(input.as_of)) {
    const t = instant(input.as_of, 'as_of');
    seq = (db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM commits WHERE committed_at <= ?').get(t) as { seq: number }).seq;
    pinned = seq !== head;
  }
  const validTime = has(input.as_of_valid_time) ? instant(input.as_of_valid_time, 'as_of_valid_time') : null;
  return { pin: { seq, validTime, pinned: pinned || validTime !== null }, head };
}
