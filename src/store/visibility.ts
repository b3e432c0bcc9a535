/** A pin on statements: knowledge as of commit `seq`, optionally valid at instant `validTime`. */
export interface StatementPin {
  seq: number;
  /** Statements valid at this instant (ISO), or null for "current at `seq`". */
  validTime: string | null;
}

/** SQL params for `visibility(pin)`: @seq and @vt. */
export function visibilityParams(p: StatementPin | null): Record<string, unknown> {
  if (!p) return {};
  return p.validTime ? { seq: p.seq, vt: p.validTime } : { seq: p.seq };
}

/**
 * Which statements a store holds. The head: every live statement. A pin at commit N:
 * statements added at or before N and not removed at or before N. A valid-time pin T
 * (with knowledge as of N): statements known by N whose validity interval holds T — from
 * `valid_from` (else their commit's time) until `valid_to` (else the time of the commit
 * that removed them, if that is at or before N).
 */
export function visibility(p: StatementPin | null): { join: string; where: string } {
  if (!p) return { join: '', where: 'q.removed_seq IS NULL' };
  if (p.validTime === null) return { join: '', where: '(q.added_seq <= @seq AND (q.removed_seq IS NULL OR q.removed_seq > @seq))' };
  return {
    join: 'JOIN commits ca ON ca.seq = q.added_seq LEFT JOIN commits cr ON cr.seq = q.removed_seq AND q.removed_seq <= @seq',
    where: `q.added_seq <= @seq
      AND COALESCE(q.valid_from, ca.observed_at, ca.committed_at) <= @vt
      AND (COALESCE(q.valid_to, cr.observed_at, cr.committed_at) IS NULL OR COALESCE(q.valid_to, cr.observed_at, cr.committed_at) > @vt)`,
  };
}

