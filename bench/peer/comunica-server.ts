/**
 * The in-memory JavaScript peer: what a Node user would otherwise put together for a local
 * SPARQL endpoint — an N3.js Store queried by Comunica (@comunica/query-sparql-rdfjs). The
 * HTTP interface (POST /import, GET /sparql) is bench/peer/http.ts, shared with the other peers.
 *
 *   node --max-old-space-size=16384 dist/bench/peer/comunica-server.js
 */
import type { Readable } from 'node:stream';
import { QueryEngine } from '@comunica/query-sparql-rdfjs';
import { Store, StreamParser } from 'n3';
import { servePeer } from './http.js';

const store = new Store();
const engine = new QueryEngine();

servePeer({
  importNTriples(body: Readable) {
    const before = store.size;
    const parser = new StreamParser({ format: 'N-Triples' });
    return new Promise((resolve, reject) => {
      store
        .import(body.pipe(parser))
        .on('end', () => resolve({ imported: store.size - before, size: store.size }))
        .on('error', reject);
      parser.on('error', reject);
    });
  },
  query: (text) => engine.query(text, { sources: [store] }),
});
