import { parse as oxParse, namedNode } from 'oxigraph';
import type { Term, Quad } from 'oxigraph';
import { fastCanonicalLine, isBlankOrComment } from './ntriples-fast.js';
import { blankNodeRenamer, type CanonQuad } from './rdf-terms.js';

export type RdfFormat = 'ntriples' | 'nquads' | 'turtle' | 'trig';

export const RDF_MEDIA_TYPES: Record<RdfFormat, string> = {
  ntriples: 'application/n-triples',
  nquads: 'application/n-quads',
  turtle: 'text/turtle',
  trig: 'application/trig',
};

export interface RdfParseOptions {
  format: RdfFormat;
  baseIri?: string | null;
  /** Named graph for triples of N-Triples / Turtle input. */
  graphUri?: string | null;
  blankNodeScope?: string | null;
  /** Line-based formats: stop at the first bad line (true) or skip and report it (false). */
  strict: boolean;
}

export interface RdfSyntaxError {
  line: number | null;
  column: number | null;
  message: string;
}

export interface ParsedChunk {
  quads: CanonQuad[];
  /** Lines consumed so far (line-based formats) or total lines of the document. */
  linesRead: number;
  triplesRead: number;
  errors: RdfSyntaxError[];
}

export class RdfSyntaxFailure extends Error {
  constructor(readonly error: RdfSyntaxError) {
    super(error.message);
  }
}

const CHUNK_STATEMENTS = 2000;

/** Oxigraph reports positions as "line L column C" relative to its input; shift them. */
function relocate(message: string, lineOffset: number): RdfSyntaxError {
  const m = /line (\d+)(?:(?: between)? columns? (\d+))?/.exec(message);
  const line = m ? Number(m[1]) + lineOffset : null;
  const column = m && m[2] ? Number(m[2]) : null;
  const text = lineOffset === 0 ? message : message.replace(/line (\d+)/g, (_, l) => `line ${Number(l) + lineOffset}`);
  return { line, column, message: text };
}

function termString(t: Term, rename: (l: string) => string): string {
  switch (t.termType) {
    case 'BlankNode':
      return '_:' + rename(t.value);
    case 'DefaultGraph':
      return '';
    default:
      return t.toString();
  }
}

function canonFromOx(q: Quad, rename: (l: string) => string): CanonQuad {
  const s = termString(q.subject as Term, rename);
  const p = termString(q.predicate as Term, rename);
  const o = termString(q.object as Term, rename);
  const g = termString(q.graph as Term, rename);
  const bn = s.startsWith('_:') || o.startsWith('_:') || g.startsWith('_:') || o.includes(' _:') || s.includes(' _:');
  return { s, p, o, g, bn };
}

/**
 * Parses an RDF document into canonical statements, a chunk at a time, so callers can
 * write and load while parsing continues. Syntax errors: line formats skip and report the
 * bad line unless `strict`; Turtle and TriG cannot resynchronise, so an error ends the parse.
 */
export function* parseRdf(text: string, opts: RdfParseOptions): Generator<ParsedChunk> {
  const rename = blankNodeRenamer(opts.blankNodeScope);
  const renameOrNull = opts.blankNodeScope ? rename : null;
  if (opts.format === 'ntriples' || opts.format === 'nquads') {
    yield* parseLines(text, opts, rename, renameOrNull);
  } else {
    yield* parseDocument(text, opts, rename);
  }
}

function* parseLines(
  text: string,
  opts: RdfParseOptions,
  rename: (l: string) => string,
  renameOrNull: ((l: string) => string) | null,
): Generator<ParsedChunk> {
  const allowGraph = opts.format === 'nquads';
  const graphSuffix = opts.graphUri ? `<${opts.graphUri}>` : '';
  const mediaType = RDF_MEDIA_TYPES[opts.format];
  let pos = 0;
  let lineNo = 0;
  let triplesRead = 0;
  let quads: CanonQuad[] = [];
  let errors: RdfSyntaxError[] = [];
  const n = text.length;
  // A UTF-8 BOM is allowed at the start of a document.
  if (text.charCodeAt(0) === 0xfeff) pos = 1;
  while (pos < n) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = n;
    const line = text.slice(pos, end);
    pos = end + 1;
    lineNo++;
    if (isBlankOrComment(line)) continue;
    let q = fastCanonicalLine(line, allowGraph, renameOrNull);
    if (q === null) {
      try {
        const parsed = oxParse(line, { format: mediaType });
        if (parsed.length !== 1) throw new Error(`Parser error at line 1: expected exactly one statement on the line`);
        q = canonFromOx(parsed[0]!, rename);
      } catch (e) {
        const err = relocate((e as Error).message, lineNo - 1);
        if (opts.strict) throw new RdfSyntaxFailure(err);
        errors.push(err);
        continue;
      }
    }
    if (graphSuffix && q.g === '') q.g = graphSuffix;
    triplesRead++;
    quads.push(q);
    if (quads.length >= CHUNK_STATEMENTS) {
      yield { quads, linesRead: lineNo, triplesRead, errors };
      quads = [];
      errors = [];
    }
  }
  yield { quads, linesRead: lineNo, triplesRead, errors };
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  let i = -1;
  while ((i = text.indexOf('\n', i + 1)) !== -1) n++;
  if (text.endsWith('\n')) n--;
  return n;
}

function* parseDocument(text: string, opts: RdfParseOptions, rename: (l: string) => string): Generator<ParsedChunk> {
  const linesRead = countLines(text);
  let triplesRead = 0;
  let quads: CanonQuad[] = [];
  const options: Parameters<typeof oxParse>[1] = { format: RDF_MEDIA_TYPES[opts.format] };
  if (opts.baseIri) options.base_iri = opts.baseIri;
  if (opts.graphUri) options.to_graph_name = namedNode(opts.graphUri);
  const it = oxParse([text] as Iterable<string>, options) as unknown as IterableIterator<Quad>;
  for (;;) {
    let r: IteratorResult<Quad>;
    try {
      r = it.next();
    } catch (e) {
      throw new RdfSyntaxFailure(relocate((e as Error).message, 0));
    }
    if (r.done) break;
    quads.push(canonFromOx(r.value, rename));
    triplesRead++;
    if (quads.length >= CHUNK_STATEMENTS) {
      yield { quads, linesRead, triplesRead, errors: [] };
      quads = [];
    }
  }
  yield { quads, linesRead, triplesRead, errors: [] };
}
