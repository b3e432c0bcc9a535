/**
 * npm run bench:commit — single-triplet commit latency and throughput at concurrency 1, 8
 * and 32 through POST /v1/graph/commit, against raw SQLite transactions with the same
 * durability (WAL, synchronous=FULL, one row per transaction) measured in the same run;
 * and as-of read latency (first read of a pin, then cached) against head reads.
 *
 *   node dist/bench/commit.js [--commits N] [--reads N]
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { startBenchServer, percentile, type BenchServer } from './lib/stackd.js';
import { request } from './lib/server-process.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const COMMITS = arg('commits', 2000);
const READS = arg('reads', 200);

export function rawSqlite(n: number) {
  const dir = mkdtempSync(join(tmpdir(), 'stackd-bench-raw-'));
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT, p TEXT, o TEXT)');
  const ins = db.prepare('INSERT INTO t (s, p, o) VALUES (?, ?, ?)');
  const tx = db.transaction((i: number) => ins.run(`s${i}`, 'p', `o${i}`));
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const a = performance.now();
    tx(i);
    lat.push(performance.now() - a);
  }
  const secs = (performance.now() - t0) / 1000;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  lat.sort((a, b) => a - b);
  return { perSec: n / secs, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

let counter = 0;
/**
 * node:http over keep-alive sockets (bench/lib/server-process.ts), not fetch: undici's fetch
 * spends several times more client CPU per request, and on two cores the client's CPU is
 * taken from the server.
 */
const post = (s: BenchServer, path: string, body: string) => request(s, 'POST', path, { 'content-type': 'application/json' }, body);

async function commitOne(s: BenchServer): Promise<number> {
  const i = counter++;
  const body = JSON.stringify({
    triplets: [{ source: { type: 'Person', name: `p${i}` }, relation: 'works_at', target: { type: 'Company', name: `c${i % 100}` } }],
  });
  const a = performance.now();
  const res = await post(s, '/v1/graph/commit', body);
  if (res.status !== 200) throw new Error(`commit failed ${res.status}: ${res.text}`);
  return performance.now() - a;
}

export async function commitsAt(s: BenchServer, concurrency: number, n: number) {
  const { ms, lat } = await commitBatch(s, concurrency, n);
  lat.sort((a, b) => a - b);
  return { perSec: n / (ms / 1000), p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

/** Commits at one concurrency: wall time and each commit's latency. */
async function commitBatch(s: BenchServer, concurrency: number, n: number): Promise<{ ms: number; lat: number[] }> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        lat.push(await commitOne(s));
      }
    }),
  );
  return { ms: performance.now() - t0, lat };
}

/**
 * n commits at each concurrency, sent in `slices` interleaved slices (c=1, c=8, c=32, c=1, …)
 * so a slow phase of a shared machine hits every concurrency alike; rates over all slices.
 */
export async function commitSweep(s: BenchServer, concurrencies: readonly number[], n: number, slices = 4) {
  const acc = concurrencies.map(() => ({ ms: 0, count: 0, lat: [] as number[] }));
  for (let i = 0; i < slices; i++) {
    const size = Math.floor(n / slices) + (i < n % slices ? 1 : 0);
    for (const [k, c] of concurrencies.entries()) {
      const b = await commitBatch(s, c, size);
      acc[k]!.ms += b.ms;
      acc[k]!.count += size;
      acc[k]!.lat.push(...b.lat);
    }
  }
  return acc.map((a) => {
    a.lat.sort((x, y) => x - y);
    return { perSec: a.count / (a.ms / 1000), p50: percentile(a.lat, 50), p99: percentile(a.lat, 99) };
  });
}

async function read(s: BenchServer, qs: string): Promise<number> {
  const a = performance.now();
  const res = await post(s, `/v1/query/sparql-text${qs}`,
    JSON.stringify({ query: 'SELECT ?p ?c WHERE { ?p <https://littlebigbrain.com/r/works_at> ?c } LIMIT 10' }));
  if (res.status !== 200) throw new Error(`read failed ${res.status}: ${res.text}`);
  return performance.now() - a;
}

async function reads(s: BenchServer, qs: string, n: number) {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) lat.push(await read(s, qs));
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

const f = (n: number, d = 2) => n.toFixed(d);

async function main() {
  console.log(`# bench:commit — ${new Date().toISOString()} — ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`);
  const raw = rawSqlite(COMMITS);
  const dir = mkdtempSync(join(tmpdir(), 'stackd-bench-commit-'));
  const s = await startBenchServer(dir);
  try {
    await commitsAt(s, 4, 200); // warm-up
    const rows: [string, { perSec: number; p50: number; p99: number }][] = [];
    const sweep = await commitSweep(s, [1, 8, 32], COMMITS);
    [1, 8, 32].forEach((c, i) => rows.push([`stackd c=${c}`, sweep[i]!]));
    console.log('\n| single-triplet commits | commits/s | p50 ms | p99 ms | vs raw SQLite tx/s |');
    console.log('|---|---|---|---|---|');
    console.log(`| raw SQLite (WAL, synchronous=FULL, 1 row/tx) | ${f(raw.perSec, 0)} | ${f(raw.p50, 3)} | ${f(raw.p99, 3)} | 1.00 |`);
    for (const [name, r] of rows) console.log(`| ${name} | ${f(r.perSec, 0)} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.perSec / raw.perSec)} |`);
    console.log(`\nconcurrency 32 vs 1: ${f(rows[2]![1].perSec / rows[0]![1].perSec)}×`);

    const head = await reads(s, '', READS);
    const pinSeq = 100;
    const first = await read(s, `?as_of_commit_seq=${pinSeq}`);
    const cached = await reads(s, `?as_of_commit_seq=${pinSeq}`, READS);
    const firstOther = await read(s, `?as_of_commit_seq=${pinSeq + 1000}`);
    console.log('\n| read (sparql-text, LIMIT 10) | p50 ms | p99 ms | vs head p50 |');
    console.log('|---|---|---|---|');
    console.log(`| head | ${f(head.p50)} | ${f(head.p99)} | 1.00 |`);
    console.log(`| as_of_commit_seq, first read (store built) | ${f(first)} | — | ${f(first / head.p50)} |`);
    console.log(`| as_of_commit_seq, second pin, first read | ${f(firstOther)} | — | ${f(firstOther / head.p50)} |`);
    console.log(`| as_of_commit_seq, cached | ${f(cached.p50)} | ${f(cached.p99)} | ${f(cached.p50 / head.p50)} |`);
  } finally {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
