/**
 * Test helpers for the black-box HTTP tests: the error envelope, requests without the
 * headers fetch adds on its own, and parsers for every SPARQL results and RDF format the
 * server writes, so a test can check what the bytes say rather than how they look.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Parser as N3Parser } from 'n3';
import { parse as oxParse } from 'oxigraph';
import type { Stackd } from './server.js';

export const API_VERSION = '2026-07-23';

export interface ErrorBody {
  type: string;
  code: string;
  message: string;
  param: string | null;
  request_id: string | null;
  doc_url: string | null;
  retryable: boolean;
  retry_after_seconds?: number;
}

/** Asserts a non-2xx answer: status, the full error envelope, and the x-request-id / lbb-version headers. */
export async function assertError(res: Response, status: number, code: string, type = 'invalid_request_error'): Promise<ErrorBody> {
  const text = await res.text();
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const requestId = res.headers.get('x-request-id');
  assert.ok(requestId, 'x-request-id header');
  assert.equal(res.headers.get('lbb-version'), API_VERSION);
  const body = JSON.parse(text) as { error: ErrorBody };
  const e = body.error;
  assert.ok(e, `error envelope in ${text}`);
  assert.equal(e.type, type);
  assert.equal(e.code, code, `code in ${text}`);
  assert.equal(typeof e.message, 'string');
  assert.ok(e.message.length > 0);
  assert.ok(e.param === null || typeof e.param === 'string');
  assert.equal(e.request_id, requestId);
  assert.equal(typeof e.doc_url, 'string');
  assert.equal(typeof e.retryable, 'boolean');
  return e;
}

export function assertMeta(res: Response) {
  assert.ok(res.headers.get('x-request-id'), 'x-request-id header');
  assert.equal(res.headers.get('lbb-version'), API_VERSION);
}

/**
 * A request sent with exactly the given headers (fetch always adds Accept and, for string
 * bodies, Content-Type). Returns a Response for the usual assertions.
 */
export function rawRequest(s: Stackd, method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: s.port, method, path, headers: { authorization: `Bearer ${s.token}`, ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve(new Response(res.statusCode === 204 ? null : Buffer.concat(parts), { status: res.statusCode!, headers: h }));
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// ---------- SPARQL results ----------

/** One term in a normal form: `<iri>`, `_:label`, `"lex"`, `"lex"@lang` or `"lex"^^<dt>` (xsd:string implicit). */
export type TermKey = string;
export type Row = Record<string, TermKey>;

const XSD = 'http://www.w3.org/2001/XMLSchema#';

function literalKey(value: string, lang?: string | null, datatype?: string | null): TermKey {
  const v = JSON.stringify(value);
  if (lang) return `${v}@${lang.toLowerCase()}`;
  if (datatype && datatype !== XSD + 'string') return `${v}^^<${datatype}>`;
  return v;
}

export function jsonTermKey(t: { type: string; value: string; 'xml:lang'?: string; datatype?: string }): TermKey {
  if (t.type === 'uri') return `<${t.value}>`;
  if (t.type === 'bnode') return `_:${t.value}`;
  return literalKey(t.value, t['xml:lang'], t.datatype);
}

export interface Results {
  vars: string[];
  rows: Row[];
  boolean?: boolean;
}

export function parseResultsJson(text: string): Results {
  const doc = JSON.parse(text) as {
    head: { vars?: string[] };
    boolean?: boolean;
    results?: { bindings: Record<string, { type: string; value: string }>[] };
  };
  if (typeof doc.boolean === 'boolean') return { vars: [], rows: [], boolean: doc.boolean };
  const rows = doc.results!.bindings.map((b) => Object.fromEntries(Object.entries(b).map(([k, t]) => [k, jsonTermKey(t)])));
  return { vars: doc.head.vars ?? [], rows };
}

const XML_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
function xmlText(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (_, e: string) =>
    e.startsWith('#x') ? String.fromCodePoint(parseInt(e.slice(2), 16)) : e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : XML_ENTITIES[e]!,
  );
}
function xmlAttr(attrs: string, name: string): string | null {
  const m = new RegExp(`${name.replace(':', '\\:')}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(attrs);
  return m ? xmlText(m[2] ?? m[3]!) : null;
}

/** SPARQL Query Results XML Format, enough of it to read what a server writes. */
export function parseResultsXml(text: string): Results {
  assert.match(text, /<sparql\s[^>]*xmlns="http:\/\/www\.w3\.org\/2005\/sparql-results#"/);
  const bool = /<boolean>\s*(true|false)\s*<\/boolean>/.exec(text);
  if (bool) return { vars: [], rows: [], boolean: bool[1] === 'true' };
  const vars = [...text.matchAll(/<variable\s+name="([^"]+)"\s*\/>/g)].map((m) => m[1]!);
  const rows: Row[] = [];
  for (const r of text.matchAll(/<result>([\s\S]*?)<\/result>|<result\s*\/>/g)) {
    const row: Row = {};
    for (const b of (r[1] ?? '').matchAll(/<binding\s+name="([^"]+)">\s*([\s\S]*?)\s*<\/binding>/g)) {
      const inner = b[2]!;
      let m: RegExpExecArray | null;
      if ((m = /^<uri>([\s\S]*)<\/uri>$/.exec(inner))) row[b[1]!] = `<${xmlText(m[1]!)}>`;
      else if ((m = /^<bnode>([\s\S]*)<\/bnode>$/.exec(inner))) row[b[1]!] = `_:${xmlText(m[1]!)}`;
      else if ((m = /^<literal([^>]*)\/>$/.exec(inner))) row[b[1]!] = literalKey('', xmlAttr(m[1]!, 'xml:lang'), xmlAttr(m[1]!, 'datatype'));
      else if ((m = /^<literal([^>]*)>([\s\S]*)<\/literal>$/.exec(inner))) {
        row[b[1]!] = literalKey(xmlText(m[2]!), xmlAttr(m[1]!, 'xml:lang'), xmlAttr(m[1]!, 'datatype'));
      } else assert.fail(`unreadable binding ${inner}`);
    }
    rows.push(row);
  }
  return { vars, rows };
}

/** RFC 4180 CSV into rows of strings (the SPARQL CSV format carries values only). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      // handled by \n
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
    i++;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function parseResultsCsv(text: string): { vars: string[]; rows: Record<string, string>[] } {
  const [head, ...rest] = parseCsv(text);
  const vars = head!;
  return { vars, rows: rest.map((r) => Object.fromEntries(vars.map((v, i) => [v, r[i] ?? '']).filter(([, x]) => x !== ''))) };
}

/** One TSV cell: a term in Turtle syntax (bare numbers and booleans allowed), or empty. */
function tsvTerm(cell: string): TermKey | null {
  if (cell === '') return null;
  if (cell.startsWith('<')) return cell;
  if (cell.startsWith('_:')) return cell;
  if (/^[+-]?\d+$/.test(cell)) return literalKey(cell, null, XSD + 'integer');
  if (/^[+-]?\d*\.\d+$/.test(cell)) return literalKey(cell, null, XSD + 'decimal');
  if (/^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$/.test(cell)) return literalKey(cell, null, XSD + 'double');
  if (cell === 'true' || cell === 'false') return literalKey(cell, null, XSD + 'boolean');
  const m = /^"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^<([^>]*)>)?$/.exec(cell);
  assert.ok(m, `unreadable TSV cell ${cell}`);
  const value = m[1]!.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)/g, (_, e: string) => {
    if (e.length > 1) return String.fromCodePoint(parseInt(e.slice(1), 16));
    return ({ t: '\t', n: '\n', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[e] ?? e;
  });
  return literalKey(value, m[2], m[3]);
}

export function parseResultsTsv(text: string): Results {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const vars = lines[0]!.split('\t').map((v) => {
    assert.ok(v.startsWith('?'), `TSV header names variables with ?: ${v}`);
    return v.slice(1);
  });
  const rows = lines.slice(1).map((l) => {
    const cells = l.replace(/\r$/, '').split('\t');
    const row: Row = {};
    vars.forEach((v, i) => {
      const t = tsvTerm(cells[i] ?? '');
      if (t !== null) row[v] = t;
    });
    return row;
  });
  return { vars, rows };
}

/** Rows as sorted strings, so result sets compare regardless of order. */
export function rowSet(rows: Record<string, string>[]): string[] {
  return rows.map((r) => JSON.stringify(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)))).sort();
}

/** Replaces blank-node labels by their order of first appearance (_:b0, _:b1 ...) across rows/triples. */
export function canonBlank(items: string[]): string[] {
  const names = new Map<string, string>();
  const sorted = [...items].sort((a, b) => a.replace(/_:[\w.-]+/g, '_:').localeCompare(b.replace(/_:[\w.-]+/g, '_:')));
  return sorted.map((s) => s.replace(/_:[A-Za-z0-9_.-]+/g, (l) => {
    if (!names.has(l)) names.set(l, `_:b${names.size}`);
    return names.get(l)!;
  }));
}

// ---------- RDF ----------

interface RdfTerm {
  termType: string;
  value: string;
  language?: string;
  datatype?: { value: string };
}

export function rdfTermKey(t: RdfTerm): TermKey {
  switch (t.termType) {
    case 'NamedNode':
      return `<${t.value}>`;
    case 'BlankNode':
      return `_:${t.value}`;
    case 'DefaultGraph':
      return '';
    default:
      return literalKey(t.value, t.language || null, t.datatype?.value ?? null);
  }
}

function quadKey(q: { subject: RdfTerm; predicate: RdfTerm; object: RdfTerm; graph: RdfTerm }): string {
  const g = rdfTermKey(q.graph);
  return `${rdfTermKey(q.subject)} ${rdfTermKey(q.predicate)} ${rdfTermKey(q.object)}${g ? ' ' + g : ''}`;
}

const N3_FORMATS: Record<string, string> = {
  'text/turtle': 'text/turtle',
  'application/n-triples': 'application/n-triples',
  'application/n-quads': 'application/n-quads',
  'application/trig': 'application/trig',
};

/**
 * Parses RDF in any format the server writes into statement keys ("s p o" or "s p o g").
 * The Turtle family goes through N3.js (a parser independent of the server's engine);
 * RDF/XML and JSON-LD through Oxigraph's parsers.
 */
export function parseRdf(text: string, mediaType: string): string[] {
  const n3 = N3_FORMATS[mediaType];
  if (n3) return new N3Parser({ format: n3 }).parse(text).map((q) => quadKey(q as never));
  return (oxParse(text, { format: mediaType }) as unknown as { subject: RdfTerm; predicate: RdfTerm; object: RdfTerm; graph: RdfTerm }[]).map(quadKey);
}
