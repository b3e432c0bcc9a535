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
