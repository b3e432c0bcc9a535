export type QueryForm = 'SELECT' | 'ASK' | 'CONSTRUCT' | 'DESCRIBE' | 'UPDATE';

const UPDATE_WORDS = new Set(['INSERT', 'DELETE', 'LOAD', 'CLEAR', 'CREATE', 'DROP', 'COPY', 'MOVE', 'ADD', 'WITH']);

/**
 * The form of a SPARQL request, read past the prologue (BASE / PREFIX) and comments, so
 * the response format can be negotiated before the engine runs. Returns null when the
 * text does not start like any query; the engine then reports the syntax error.
 */
export function queryForm(text: string): QueryForm | null {
  let i = 0;
  const n = text.length;
  const skipSpaceAndComments = () => {
    for (;;) {
      while (i < n && /\s/.test(text[i]!)) i++;
      if (text[i] === '#') {
        while (i < n && text[i] !== '\n') i++;
        continue;
      }
      return;
    }
  };
  const word = (): string => {
    const m = /^[A-Za-z]+/.exec(text.slice(i, i + 16));
    return m ? m[0] : '';
  };
  const skipIri = (): boolean => {
    if (text[i] !== '<') return false;
    const end = text.indexOf('>', i);
    if (end < 0) return false;
    i = end + 1;
    return true;
  };
  for (;;) {
    skipSpaceAndComments();
    const w = word().toUpperCase();
    if (w === 'BASE') {
      i += 4;
      skipSpaceAndComments();
      if (!skipIri()) return null;
      continue;
    }
    if (w === 'PREFIX') {
      i += 6;
      skipSpaceAndComments();
      const m = /^[^\s:]*:/.exec(text.slice(i, i + 256));
      if (!m) return null;
      i += m[0].length;
      skipSpaceAndComments();
      if (!skipIri()) return null;
      continue;
    }
    if (w === 'SELECT' || w === 'ASK' || w === 'CONSTRUCT' || w === 'DESCRIBE') return w;
    if (UPDATE_WORDS.has(w)) return 'UPDATE';
    return null;
  }
}

const IRIREF = /<[^<>"{}|^`\\\x00-\x20]*>/y;
const WORD = /[\p{L}\p{N}_\-.:?$@]+/uy;

/**
 * True when the query text has a dataset clause (FROM or FROM NAMED). Such a query names
 * its own dataset, so the union default graph must not replace it. Comments, strings and
 * IRIs are skipped; `?from`, `ex:from`, `"x"@from` and the like are not keywords.
 */
export function hasDatasetClause(text: string): boolean {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i]!;
    if (c === '#') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      const long = text.startsWith(c.repeat(3), i);
      const close = long ? c.repeat(3) : c;
      i += close.length;
      while (i < n && !text.startsWith(close, i)) i += text[i] === '\\' ? 2 : 1;
      i += close.length;
    } else if (c === '<') {
      IRIREF.lastIndex = i;
      i = IRIREF.test(text) ? IRIREF.lastIndex : i + 1;
    } else {
      WORD.lastIndex = i;
      const m = WORD.exec(text);
      if (!m) {
        i++;
        continue;
      }
      if (m[0].toUpperCase() === 'FROM') return true;
      i += m[0].length;
    }
  }
  return false;
}
