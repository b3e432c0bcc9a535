import { badRequest } from './errors.js';

/** Query-string access that refuses parameters a route does not know and repeated single values. */
export class Params {
  constructor(
    readonly search: URLSearchParams,
    known: readonly string[],
  ) {
    const allowed = new Set([...known, 'graph', 'branch']);
    for (const k of new Set(search.keys())) {
      if (!allowed.has(k)) {
        throw badRequest('unknown_parameter', `unknown query parameter "${k}" (this route accepts: ${[...allowed].sort().join(', ')})`, k);
      }
    }
  }

  string(name: string): string | null {
    const all = this.search.getAll(name);
    if (all.length > 1) throw badRequest('repeated_parameter', `parameter "${name}" was given ${all.length} times; give it once`, name);
    return all[0] ?? null;
  }

  bool(name: string, dflt: boolean): boolean {
    const v = this.string(name);
    if (v === null || v === '') return dflt;
    if (/^(true|1|yes)$/i.test(v)) return true;
    if (/^(false|0|no)$/i.test(v)) return false;
    throw badRequest('invalid_parameter', `parameter "${name}" must be true or false, not "${v}"`, name);
  }

  int(name: string, min: number, max: number): number | null {
    const v = this.string(name);
    if (v === null || v === '') return null;
    if (!/^-?\d+$/.test(v)) throw badRequest('invalid_parameter', `parameter "${name}" must be an integer, not "${v}"`, name);
    const n = Number(v);
    if (n < min || n > max) throw badRequest('invalid_parameter', `parameter "${name}" must be between ${min} and ${max}`, name);
    return n;
  }

  oneOf<T extends string>(name: string, values: readonly T[], dflt: T): T {
    const v = this.string(name);
    if (v === null || v === '') return dflt;
    if (!(values as readonly string[]).includes(v)) {
      throw badRequest('invalid_parameter', `parameter "${name}" must be one of ${values.join(', ')}; got "${v}"`, name);
    }
    return v as T;
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * True when the string's leading YYYY-MM-DD names a real calendar day. Date.parse rolls
 * 2021-02-30 over to March 2nd instead of refusing it.
 */
export function realCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

export function parseRfc3339(value: string, param: string): string {
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value)) || !realCalendarDate(value)) {
    throw badRequest('invalid_timestamp', `parameter "${param}" must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z`, param);
  }
  return new Date(value).toISOString();
}
