import type { CanonQuad } from './rdf-terms.js';

/*
 * Fast path for N-Triples / N-Quads lines already in (near) canonical form: terms are
 * taken from the text as written, without building term objects. A line this pattern
 * does not accept exactly (escapes, control characters, rdf:langString, xsd:string,
 * upper-case language tags, comments in odd places, RDF-star ...) returns null and goes
 * through Oxigraph's own parser instead, which also produces the error message.
 */
const IRI = String.raw`<[A-Za-z][A-Za-z0-9+.\-]*:(?:[^\x00-\x20<>"{}|^\x60\\%\[\]]|%[0-9A-Fa-f]{2})*>`;
const BNODE = String.raw`_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?`;
const LIT_BODY = String.raw`"[^"\\\x00-\x1f\x7f]*"`;
const LANG = String.raw`@[a-z]{1,8}(?:-[a-z0-9]{1,8})*`;
const DT = String.raw`\^\^(${IRI})`;
const WS = String.raw`[ \t]+`;
const LINE = new RegExp(
  String.raw`^[ \t]*(${IRI}|${BNODE})${WS}(${IRI})${WS}(${IRI}|${BNODE}|${LIT_BODY}(?:${LANG}|${DT})?)(?:${WS}(${IRI}|${BNODE}))?[ \t]*\.[ \t]*(?:#[^\r\n]*)?\r?$`,
);
const XSD_STRING = '^^<http://www.w3.org/2001/XMLSchema#string>';
const RDF_LANGSTRING = '^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>';
const RDF_DIRLANGSTRING = '^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString>';

export function fastCanonicalLine(
  line: string,
  allowGraph: boolean,
  renameBlank: ((label: string) => string) | null,
): CanonQuad | null {
  const m = LINE.exec(line);
  if (!m) return null;
  let s = m[1]!;
  const p = m[2]!;
  let o = m[3]!;
  let g = m[5] ?? '';
  if (g !== '' && !allowGraph) return null;
  if (o.charCodeAt(0) === 34 /* " */ && o.charCodeAt(o.length - 1) !== 34) {
    // typed literal: xsd:string is implicit in canonical form; langString needs a tag
    if (o.endsWith(XSD_STRING) || o.endsWith(RDF_LANGSTRING) || o.endsWith(RDF_DIRLANGSTRING)) return null;
  }
  let bn = false;
  if (s.charCodeAt(0) === 95 /* _ */) {
    bn = true;
    if (renameBlank) s = '_:' + renameBlank(s.slice(2));
  }
  if (o.charCodeAt(0) === 95) {
    bn = true;
    if (renameBlank) o = '_:' + renameBlank(o.slice(2));
  }
  if (g.charCodeAt(0) === 95) {
    bn = true;
    if (renameBlank) g = '_:' + renameBlank(g.slice(2));
  }
  return { s, p, o, g, bn };
}

/** A line with nothing to parse: blank or a comment. */
export function isBlankOrComment(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32 || c === 9 || c === 13) continue;
    return c === 35; /* # */
  }
  return true;
}
