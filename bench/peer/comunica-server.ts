/**
 * The JavaScript peer: what a Node user would otherwise put together for a local SPARQL
 * endpoint — an in-memory N3.js Store queried by Comunica (@comunica/query-sparql-rdfjs).
 * A minimal HTTP server so the suite drives it through the same harness as stackd:
 *
 *   POST /import   an N-Triples body, stream-parsed by N3 into the store
 *   GET  /sparql   ?query=..., answered in the Accept type (SPARQL JSON results or Turtle)
 *
 *   node --max-old-space-size=16384 dist/bench/peer/comunica-server.js
 * Logs one JSON line {"msg":"listening","port":N} on stdout.
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import { QueryEngine } from '@comunica/query-sparql-rdfjs';
import { Store, StreamParser } from 'n3';

const store = new Store();
const engine = new QueryEngine();

function importBody(req: http.IncomingMessage): Promise<number> {
  const before = store.size;
  const parser = new StreamParser({ format: 'N-Triples' });
  return new Promise((resolve, reject) => {
    store.import(req.pipe(parser)).on('end', () => resolve(store.size - before)).on('error', reject);
    parser.on('error', reject);
  });
}

async function answer(query: string, accept: string, res: http.ServerResponse) {
  const type = accept.includes('turtle') ? 'text/turtle' : accept.includes('n-triples') ? 'application/n-triples' : 'application/sparql-results+json';
  const result = await engine.query(query, { sources: [store] });
  const { data } = await engine.resultToString(result, type);
  res.writeHead(200, { 'content-type': type });
  await new Promise<void>((resolve, reject) => {
    (data as Readable).on('error', reject).on('end', resolve).pipe(res);
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const fail = (status: number, e: unknown) => {
    if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(String((e as Error)?.message ?? e));
  };
  if (req.method === 'POST' && url.pathname === '/import') {
    importBody(req).then(
      (added) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ imported: added, size: store.size }));
      },
      (e) => fail(400, e),
    );
  } else if (req.method === 'GET' && url.pathname === '/sparql') {
    const query = url.searchParams.get('query');
    if (!query) return fail(400, 'query parameter required');
    answer(query, req.headers.accept ?? '', res).catch((e) => fail(400, e));
  } else {
    fail(404, 'not found');
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(JSON.stringify({ msg: 'listening', port: typeof addr === 'object' && addr ? addr.port : 0 }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
