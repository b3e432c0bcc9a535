import { createHash } from 'node:crypto';

/**
 * A statement in canonical N-Triples term syntax — the form stored in SQLite and fed to
 * the head. Equal RDF terms always have equal canonical strings: IRIs as written,
 * literals with only `"` `\` and control characters escaped, language tags lower-cased,
 * xsd:string implicit, `g` empty for the default graph.
 */
export interface CanonQuad {
  s: string;
  p: string;
  o: string;
  g: string;
  /** True when any term is a blank node (such rows are loaded term by term to keep labels). */
  bn: boolean;
}

export function quadLine(q: { s: string; p: string; o: string; g: string }): string {
  return q.g === '' ? `${q.s} ${q.p} ${q.o} .` : `${q.s} ${q.p} ${q.o} ${q.g} .`;
}

/** Renames blank-node labels into a document scope, so labels of different scopes never meet. */
export function blankNodeRenamer(scope: string | null | undefined): (label: string) => string {
  if (!scope) return (label) => label;
  const prefix = 's' + createHash('sha256').update(scope).digest('hex').slice(0, 16) + '_';
  return (label) => prefix + label;
}

const ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20<>"{}|^`\\]*$/;

/** True for an absolute IRI that can be written between angle brackets as is. */
export function isAbsoluteIri(value: string): boolean {
  return ABSOLUTE_IRI.test(value);
}
