/**
 * The durable JavaScript peer: what a Node user would pick for a local SPARQL endpoint that
 * keeps its data — quadstore on classic-level (LevelDB on disk) queried by quadstore-comunica.
 * The HTTP interface (POST /import, GET /sparql) is bench/peer/http.ts, shared with the other
 * peers.
 *
 *   node dist/bench/peer/quadstore-server.js --dir DIR [--batch-size N]
 *
 * --dir: the LevelDB directory (created; the suite puts it in its temp dir, which it removes).
 * Without it a fresh temp dir is used and removed on SIGTERM.
 *
 * Loading: quadstore's bulk path is putStream(stream, {batchSize}), which gathers batchSize
 * quads and writes each group with multiPut, i.e. one LevelDB write batch holding the keys of
 * all six default indexes for every quad. Without batchSize it puts quad by quad. Default
 * 10,000 here: on the suite's BSBM data (one run each, this 2-core VM) batchSize 1 loaded 7k
 * triples/s, 100 and 1,000 about 19–21k, 10,000 about 22–26k, 50,000 no better.
 *
 * Durability: the library defaults, i.e. none passed by quadstore and classic-level's default
 * `sync: false`: each batch is appended to LevelDB's log and the OS page cache before its
 * promise resolves, so an acked import survives a crash of this process but not of the
 * machine (nothing is fsynced). stackd's import fsyncs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ClassicLevel } from 'classic-level';
import { DataFactory, StreamParser } from 'n3';
import { Quadstore } from 'quadstore';
import { Engine } from 'quadstore-comunica';
import { servePeer } from './http.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? null : null;
};

const ownDir = arg('dir') === null;
const dir = arg('dir') ?? mkdtempSync(join(tmpdir(), 'stackd-peer-quadstore-'));
const batchSize = Number(arg('batch-size') ?? 10_000);
if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`--batch-size needs a positive integer, got ${arg('batch-size')}`);

// Keys are quadstore's utf8 strings, values empty Uint8Arrays ("view"), as quadstore writes them.
const backend = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
// N3's DataFactory: the parser already makes N3 terms, and quadstore builds its results with it.
const store = new Quadstore({ backend, dataFactory: DataFactory });
const engine = new Engine(store);
await store.open();

/**
 * Exact number of quads: the keys of one index (every index holds one key per quad). Quadstore
 * has no exact count (countQuads is LevelDB's approximate size in bytes, for join planning), and
 * counting keys skips decoding every quad as getStream({}) would.
 */
async function countQuads(): Promise<number> {
  const { prefix } = store.indexes[0]!;
  // Every key of the index starts with its prefix; the prefix with its last character raised
  // by one is the first string after all of them (LevelDB compares keys bytewise).
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const it = backend.keys({ gte: prefix, lt: end });
  let n = 0;
  try {
    for (;;) {
      const keys = await it.nextv(10_000);
      if (keys.length === 0) return n;
      n += keys.length;
    }
  } finally {
    await it.close();
  }
}

let size = 0;

servePeer({
  async importNTriples(body: Readable) {
    const parser = new StreamParser({ format: 'N-Triples' });
    // putStream does not see errors of the request stream, only of the parser: forward them.
    body.on('error', (e) => parser.destroy(e));
    await store.putStream(body.pipe(parser), { batchSize });
    const before = size;
    const t0 = performance.now();
    size = await countQuads();
    return { imported: size - before, size, countMs: performance.now() - t0 };
  },
  query: (text) => engine.query(text),
  async close() {
    await store.close();
    if (ownDir) rmSync(dir, { recursive: true, force: true });
  },
});
