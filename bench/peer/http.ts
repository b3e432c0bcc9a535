/**
 * The HTTP side shared by the JavaScript peers of the benchmark suite (comunica-server.ts,
 * quadstore-server.ts), so that they differ only in their store and query engine:
 *
 *   POST /import   an N-Triples body, handed to the peer's store; answers {imported, size, …}
 *   GET  /sparql   ?query=..., SELECT/ASK as SPARQL JSON results, CONSTRUCT/DESCRIBE as
 *                  N-Triples (sent as text/turtle when Accept asks for Turtle: N-Triples is Turtle)
 *
 * Results are serialised here rather than by the engine: quadstore-comunica's engine is a
 * Comunica build without result serialisers, and one serialiser for both peers keeps the
 * comparison about the stores and engines, not about two serialisers.
 *
 * Prints one JSON line {"msg":"listening","port":N} on stdout once it listens.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { Readable } from 'node:stream';
import type * as RDF from '@rdfjs/types';
import { Writer } from 'n3';

/** What a peer server plugs into the shared HTTP side. */
export interface PeerStore {
  /** Reads an N-Triples body into the store; resolves once it is written, with the reply's JSON. */
  importNTriples(body: Readable): Promise<{ imported: number; size: number } & Record<string, unknown>>;
  /** The engine's RDF/JS query future (both engines implement RDF/JS Query). */
  query(text: string): Promise<RDF.Query<RDF.AllMetadataSupport>>;
  /** Called on SIGTERM before the process exits (a disk store closes its database here). */
  close?(): Promise<void>;
}

const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';
const SPARQL_JSON = 'application/sparql-results+json';
/** Output is written in pieces of about this size: one res.write per binding costs more than the serialising. */
const FLUSH_CHARS = 64 * 1024;

function termJson(t: RDF.Term): Record<string, string> {
  switch (t.termType) {
    case 'NamedNode':
      return { type: 'uri', value: t.value };
    case 'BlankNode':
      return { type: 'bnode', value: t.value };
    case 'Literal':
      if (t.language) return { type: 'literal', value: t.value, 'xml:lang': t.language };
      return t.datatype.value === XSD_STRING ? { type: 'literal', value: t.value } : { type: 'literal', value: t.value, datatype: t.datatype.value };
    default:
      throw new Error(`a ${t.termType} cannot be written as a SPARQL JSON result term`);
  }
}

/**
 * Comunica (v3 and later, so both engines here) puts {variable, canBeUndef} objects in
 * metadata().variables where the RDF/JS typing says RDF.Variable: accept either.
 */
function variableName(v: unknown): string {
  const term = (typeof v === 'object' && v !== null && 'variable' in v ? (v as { variable: RDF.Variable }).variable : v) as RDF.Variable;
  return term.value;
}

/**
 * The result streams of both engines are asynciterator AsyncIterators, which are async
 * iterable; the RDF/JS ResultStream type does not say so.
 */
function iterate<T>(stream: RDF.ResultStream<T>): AsyncIterable<T> {
  if (!(Symbol.asyncIterator in stream)) throw new Error('the engine returned a result stream that is not async iterable');
  return stream as unknown as AsyncIterable<T>;
}

/** Writes pieces with backpressure: a large CONSTRUCT must not pile up in memory. */
async function writeOut(res: http.ServerResponse, pieces: AsyncIterable<string>): Promise<void> {
  let buf = '';
  for await (const piece of pieces) {
    buf += piece;
    if (buf.length >= FLUSH_CHARS) {
      const ok = res.write(buf);
      buf = '';
      if (!ok) await once(res, 'drain');
    }
  }
  res.end(buf);
}

async function* bindingsJson(vars: string[], stream: RDF.ResultStream<RDF.Bindings>): AsyncIterable<string> {
  yield `{"head":{"vars":${JSON.stringify(vars)}},"results":{"bindings":[`;
  let first = true;
  for await (const b of iterate(stream)) {
    const row: Record<string, Record<string, string>> = {};
    for (const [v, t] of b) row[v.value] = termJson(t);
    yield (first ? '' : ',') + JSON.stringify(row);
    first = false;
  }
  yield ']}}';
}

async function* quadLines(stream: RDF.ResultStream<RDF.Quad>): AsyncIterable<string> {
  const writer = new Writer({ format: 'N-Triples' });
  // No graph: CONSTRUCT and DESCRIBE produce triples (in the default graph).
  for await (const q of iterate(stream)) yield writer.quadToString(q.subject, q.predicate, q.object);
}

async function answer(store: PeerStore, query: string, accept: string, res: http.ServerResponse): Promise<void> {
  const result = await store.query(query);
  switch (result.resultType) {
    case 'bindings': {
      const vars = ((await result.metadata()).variables as unknown[]).map(variableName);
      const stream = await result.execute();
      res.writeHead(200, { 'content-type': SPARQL_JSON });
      return writeOut(res, bindingsJson(vars, stream));
    }
    case 'boolean': {
      const value = await result.execute();
      res.writeHead(200, { 'content-type': SPARQL_JSON });
      res.end(JSON.stringify({ head: {}, boolean: value }));
      return;
    }
    case 'quads': {
      const stream = await result.execute();
      res.writeHead(200, { 'content-type': accept.includes('turtle') ? 'text/turtle' : 'application/n-triples' });
      return writeOut(res, quadLines(stream));
    }
    default:
      throw new Error(`${result.resultType} queries (updates) are not served by the benchmark peer`);
  }
}

/** Starts the peer's HTTP server on an ephemeral loopback port. */
export function servePeer(store: PeerStore): http.Server {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const fail = (status: number, e: unknown) => {
      // An error after the head was sent (mid-stream) cannot change the status: cut the
      // response so the client sees it broken rather than complete.
      if (res.headersSent) return void res.destroy(e instanceof Error ? e : new Error(String(e)));
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(String((e as Error)?.message ?? e));
    };
    if (req.method === 'POST' && url.pathname === '/import') {
      store.importNTriples(req).then(
        (reply) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(reply));
        },
        (e) => fail(400, e),
      );
    } else if (req.method === 'GET' && url.pathname === '/sparql') {
      const query = url.searchParams.get('query');
      if (!query) return fail(400, 'query parameter required');
      answer(store, query, req.headers.accept ?? '', res).catch((e) => fail(400, e));
    } else {
      fail(404, 'not found');
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(JSON.stringify({ msg: 'listening', port: typeof addr === 'object' && addr ? addr.port : 0 }) + '\n');
  });
  process.once('SIGTERM', () => {
    server.close();
    (store.close?.() ?? Promise.resolve()).then(
      () => process.exit(0),
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  });
  return server;
}
