/**
 * Helpers for the triplet, temporal and concurrency tests: JSON writes and reads against the
 * data-plane routes, SPARQL as term keys, the head commit_seq, and the generic schema's IRIs.
 */
import assert from 'node:assert/strict';
import type { Stackd } from './server.js';
import { assertMeta, parseResultsJson, parseRdf, type Row } from './http.js';

export const BASE = 'https://littlebigbrain.com/';
export const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
export const RDFS_LABEL = 'http://www.w3.org/2000/01/rdf-schema#label';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface Reply {
  status: number;
  body: Json;
  res: Response;
}

/** POST a JSON body (or raw text) and read the JSON answer, whatever the status. */
export async function postJson(s: Stackd, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await s.fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  assertMeta(res);
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, res };
}

/** POST NDJSON lines (objects are serialised, strings sent as they are). */
export async function postNdjson(s: Stackd, path: string, lines: unknown[], headers: Record<string, string> = {}): Promise<Reply> {
  const body = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
  const res = await s.fetch(path, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', ...headers }, body });
  const text = await res.text();
  assertMeta(res);
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, res };
}

export async function getJson(s: Stackd, path: string): Promise<Reply> {
  const res = await s.fetch(path);
  const text = await res.text();
  assertMeta(res);
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, res };
}

/** 200 or fail with the body in the message. */
export function ok(r: Reply, what = 'request'): Json {
  assert.equal(r.status, 200, `${what}: ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function commit(s: Stackd, file: unknown, opts: { key?: string; query?: string } = {}): Promise<Reply> {
  return postJson(s, '/v1/graph/commit' + (opts.query ? '?' + opts.query : ''), file, opts.key ? { 'idempotency-key': opts.key } : {});
}

/** Commits and returns the (fresh) commit_seq. */
export async function commitOk(s: Stackd, file: unknown, key?: string): Promise<number> {
  const b = ok(await commit(s, file, { key }), 'commit');
  assert.equal(b.replayed, false);
  assert.equal(typeof b.commit_seq, 'number');
  return b.commit_seq as number;
}

export function ent(type: string, name: string, key?: string) {
  return key === undefined ? { type, name } : { type, name, key };
}

export function triplet(src: [string, string], relation: string, tgt: [string, string], extra: Json = {}) {
  return { source: ent(...src), relation, target: ent(...tgt), ...extra };
}

export async function headSeq(s: Stackd): Promise<number> {
  const r = ok(await getJson(s, '/v1/status'), 'status');
  return r.head_seq as number;
}

/** SELECT over GET /sparql with extra query parameters; rows as term keys (`<iri>`, `"lit"` ...). */
export async function sparql(s: Stackd, query: string, params = ''): Promise<Row[]> {
  const res = await s.fetch('/sparql?query=' + encodeURIComponent(query) + (params ? '&' + params : ''), {
    headers: { accept: 'application/sparql-results+json' },
  });
  const text = await res.text();
  assert.equal(res.status, 200, `sparql ${params}: ${text}`);
  return parseResultsJson(text).rows;
}

/** SELECT over POST /v1/query/sparql-text (read options in the query string). */
export async function sparqlText(s: Stackd, query: string, params = ''): Promise<{ rows: Row[]; body: Json }> {
  const r = await postJson(s, '/v1/query/sparql-text' + (params ? '?' + params : ''), { query });
  ok(r, `sparql-text ${params}`);
  return { rows: parseResultsJson(r.body.results as string).rows, body: r.body };
}

export async function countAll(s: Stackd, params = ''): Promise<number> {
  const rows = await sparql(s, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', params);
  return Number(JSON.parse(rows[0]!.n!.split('^^')[0]!));
}

/** Statements of an N-Triples export ("<s> <p> <o>"), optionally pinned. */
export async function exportNt(s: Stackd, params = ''): Promise<string[]> {
  const res = await s.fetch('/v1/graph/export/rdf?format=nt' + (params ? '&' + params : ''));
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return parseRdf(text, 'application/n-triples');
}

/** An entity's id through GET /v1/graph/entity (the record outlives retraction). */
export async function entityId(s: Stackd, type: string, name: string): Promise<string> {
  const r = ok(await getJson(s, `/v1/graph/entity?type=${encodeURIComponent(type)}&name=${encodeURIComponent(name)}`), 'entity');
  return r.entity.id as string;
}

export async function entityIri(s: Stackd, type: string, name: string): Promise<string> {
  return `<${BASE}e/${await entityId(s, type, name)}>`;
}

export const rel = (name: string) => `<${BASE}r/${name}>`;
export const cls = (name: string) => `<${BASE}class/${name}>`;
export const prop = (name: string) => `<${BASE}p/${name}>`;

/** /v1/query/state's targets per relation, as "relation→TargetName" sorted. */
export async function stateOf(s: Stackd, type: string, name: string, extra: Json = {}, params = ''): Promise<string[]> {
  const r = ok(await postJson(s, '/v1/query/state' + (params ? '?' + params : ''), { entity: { entity_type: type, name }, ...extra }), 'state');
  return (r.state as Json[]).map((e) => `${e.relation.name}→${e.target.name}`).sort();
}
