/**
 * The benchmark suite (issue 5): one generated BSBM-shaped dataset, and in one run on it
 *
 *   import   POST /v1/graph/import/rdf vs raw in-process Store.load        (triples/s)
 *   restart  process spawn → first query answered vs raw load of the data   (ms)
 *   query    the BSBM explore mix over HTTP /sparql from an external client process, at
 *            concurrency 1 and 4 (two query workers) vs the same queries in-process
 *   memory   RSS with the dataset loaded: per head replica vs a raw store holding it
 *   commit   single-triplet commits at concurrency 1, 8, 32 vs raw fsync'd SQLite
 *   peer     the same import and query mix against Comunica over an N3.js store
 *   scale    the scale ceiling (bench/scale.ts, run as a child process)
 *
 *   npm run bench                                   # everything, 1M triples
 *   npm run bench -- --triples 100000               # 100k
 *   npm run bench:query -- --triples 100000         # one part (plus what it needs)
 *
 * Options: --triples N (1000000) · --parts a,b,… (all) · --rounds N timed rounds of the
 * 12-query mix (auto) · --peer-time-limit-s N (300) · --commits N (2000) · --json FILE ·
 * --keep (keep the temp dir) · --chunk-lines N (raw load, 2000) · --scale-args "…" (passed
 * to bench/scale.ts).
 * Nothing is asserted: figures are printed with the targets beside them.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { productsForTriples, writeDataset } from './bsbm/generate.js';
import { QUERY_NAMES, queryMix } from './bsbm/queries.js';
import { commitsAt, rawSqlite } from './commit.js';
import type { MixFile, MixRun } from './lib/mix.js';
import { loadAvg, procCpuMs, procMem, treeMem } from './lib/proc.js';
import type { RawResult } from './lib/raw-oxigraph.js';
import { firstCount, postFileInChunks, runJsonChild, spawnServer, type ServerProcess } from './lib/server-process.js';
import { startBenchServer } from './lib/stackd.js';
import { fmt, summarize } from './lib/stats.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const RAW_CHILD = here('./lib/raw-oxigraph.js');
const MIX_CLIENT = here('./lib/mix-client.js');
const PEER_SERVER = here('./peer/comunica-server.js');
const SCALE = here('./scale.js');
const MIB = 1024 * 1024;
const ALL_PARTS = ['import', 'restart', 'query', 'memory', 'commit', 'peer', 'scale'] as const;
type Part = (typeof ALL_PARTS)[number];

interface Options {
  triples: number;
  parts: Set<Part>;
  rounds: number | null;
  peerTimeLimitS: number;
  commits: number;
  json: string | null;
  keep: boolean;
  chunkLines: number;
  scaleArgs: string[];
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    triples: 1_000_000, parts: new Set(ALL_PARTS), rounds: null, peerTimeLimitS: 300, commits: 2000,
    json: null, keep: false, chunkLines: 2000, scaleArgs: [],
  };
  const num = (name: string, v: string | undefined) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} needs a positive number, got ${v}`);
    return Math.floor(n);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case '--triples': o.triples = num(a, argv[++i]); break;
      case '--rounds': o.rounds = num(a, argv[++i]); break;
      case '--peer-time-limit-s': o.peerTimeLimitS = num(a, argv[++i]); break;
      case '--commits': o.commits = num(a, argv[++i]); break;
      case '--chunk-lines': o.chunkLines = num(a, argv[++i]); break;
      case '--json': o.json = argv[++i] ?? null; break;
      case '--keep': o.keep = true; break;
      case '--scale-args': o.scaleArgs = (argv[++i] ?? '').split(/\s+/).filter(Boolean); break;
      case '--parts': {
        const parts = (argv[++i] ?? '').split(',').filter(Boolean);
        for (const p of parts) if (!(ALL_PARTS as readonly string[]).includes(p)) throw new Error(`unknown part ${p}; parts: ${ALL_PARTS.join(', ')}`);
        o.parts = new Set(parts as Part[]);
        break;
      }
      default: throw new Error(`unknown option ${a}`);
    }
  }
  return o;
}

// ---------------------------------------------------------------- data

/** Byte offsets that split an N-Triples file at line ends into pieces of at most maxBytes. */
function lineCuts(path: string, maxBytes: number): number[] {
  const size = statSync(path).size;
  const cuts = [0];
  const fd = openSync(path, 'r');
  const buf = Buffer.alloc(1 << 20);
  try {
    while (size - cuts[cuts.length - 1]! > maxBytes) {
      const limit = cuts[cuts.length - 1]! + maxBytes;
      const from = Math.max(0, limit - buf.length);
      const n = readSync(fd, buf, 0, limit - from, from);
      const nl = buf.subarray(0, n).lastIndexOf(10);
      if (nl < 0) throw new Error('a line longer than 1 MiB');
      cuts.push(from + nl + 1);
    }
  } finally {
    closeSync(fd);
  }
  cuts.push(size);
  return cuts;
}

// ---------------------------------------------------------------- parts

interface ImportFigures { ms: number; triplesPerSec: number; count: number; cpuMs: number; rssMiB: number; requests: number }
interface RestartFigures { ms: number; listeningMs: number; buildMs: number | null; count: number; rssMiB: number; cpuMs: number }

async function stackdImport(dir: string, file: string, cuts: number[], triples: number, distinct: number): Promise<ImportFigures> {
  const s = await spawnServer(dir);
  try {
    await s.ready;
    const cpu0 = procCpuMs(s.pid);
    const t0 = performance.now();
    await postFileInChunks(s, '/v1/graph/import/rdf', file, cuts, 'application/n-triples');
    const ms = performance.now() - t0;
    const cpuMs = procCpuMs(s.pid) - cpu0;
    const count = await firstCount(s);
    if (count !== distinct) throw new Error(`stackd holds ${count} triples after the import, expected ${distinct}`);
    return { ms, triplesPerSec: triples / (ms / 1000), count, cpuMs, rssMiB: treeMem(s.pid).rssMiB, requests: cuts.length - 1 };
  } finally {
    await s.stop();
  }
}

/** Spawn → first COUNT answered; the server is left running. */
async function restart(dir: string, args: string[]): Promise<{ s: ServerProcess; r: RestartFigures }> {
  const s = await spawnServer(dir, { args });
  const listeningMs = performance.now() - s.spawnedAt;
  const count = await firstCount(s);
  const ms = performance.now() - s.spawnedAt;
  const cpuMs = procCpuMs(s.pid);
  await s.ready;
  const built = s.logs.filter((m) => m.msg === 'head replica ready').map((m) => m.build_ms as number);
  // Let the build's garbage settle before reading RSS (what a steady server holds).
  await new Promise((r) => setTimeout(r, 1500));
  return { s, r: { ms, listeningMs, buildMs: built.length ? Math.max(...built) : null, count, rssMiB: treeMem(s.pid).rssMiB, cpuMs } };
}

async function runClient(endpoint: string, mixPath: string, concurrency: number, token: string | null, timeLimitS = 0): Promise<MixRun> {
  const args = [MIX_CLIENT, '--endpoint', endpoint, '--mix', mixPath, '--concurrency', String(concurrency)];
  if (token) args.push('--token', token);
  if (timeLimitS) args.push('--time-limit-s', String(timeLimitS));
  return runJsonChild<MixRun>(args);
}

interface PeerFigures { importMs: number; triplesPerSec: number; size: number; rssMiB: number; mix: MixRun | null }

async function runPeer(file: string, cuts: number[], triples: number, distinct: number, mixPath: string | null, timeLimitS: number, log: (m: string) => void): Promise<PeerFigures> {
  const proc = spawn(process.execPath, ['--max-old-space-size=16384', PEER_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(proc, 'exit');
  try {
    const port = await new Promise<number>((resolve, reject) => {
      proc.stdout!.setEncoding('utf8').once('data', (d: string) => resolve((JSON.parse(d.split('\n')[0]!) as { port: number }).port));
      proc.once('exit', (c) => reject(new Error(`peer exited ${c}`)));
    });
    const peer = { port, token: '' };
    const t0 = performance.now();
    const replies = await postFileInChunks(peer, '/import', file, cuts, 'application/n-triples');
    const importMs = performance.now() - t0;
    const size = (JSON.parse(replies[replies.length - 1]!) as { size: number }).size;
    if (size !== distinct) throw new Error(`the peer holds ${size} triples, expected ${distinct}`);
    const rssMiB = procMem(proc.pid!)!.rssMiB;
    log(`  peer import ${fmt(importMs)} ms; running the mix (time limit ${timeLimitS} s)`);
    const mix = mixPath ? await runClient(`http://127.0.0.1:${port}/sparql`, mixPath, 1, null, timeLimitS) : null;
    return { importMs, triplesPerSec: triples / (importMs / 1000), size, rssMiB, mix };
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

// ---------------------------------------------------------------- report

const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);
const qps = (m: MixRun) => m.queries / (m.totalMs / 1000);
const verdict = (ok: boolean) => (ok ? 'met' : '**NOT met**');

function perQueryTable(rounds: number, runs: [string, MixRun][]): string[] {
  const out = [`| query | ${runs.map(([n]) => `${n} p50 / p99 ms`).join(' | ')} |`, `|---|${runs.map(() => '---').join('|')}|`];
  QUERY_NAMES.forEach((name, qi) => {
    const cells = runs.map(([, m]) => {
      const lat = m.latencies.filter((_, i) => i % QUERY_NAMES.length === qi);
      const s = summarize(lat);
      return s.n ? `${fmt(s.p50, 2)} / ${fmt(s.p99, 2)}` : '—';
    });
    out.push(`| ${name} | ${cells.join(' | ')} |`);
  });
  out.push(`| all (${rounds} rounds) | ${runs.map(([, m]) => { const s = summarize(m.latencies); return `${fmt(s.p50, 2)} / ${fmt(s.p99, 2)}`; }).join(' | ')} |`);
  return out;
}

function sizeCheck(reference: number[], other: number[]): string {
  const diffs = QUERY_NAMES.map((n, i) => (reference[i] === other[i] ? null : `${n.split(' ')[0]}: ${other[i]} vs ${reference[i]}`)).filter(Boolean);
  return diffs.length === 0 ? 'same result sizes as raw for all 12 warm-up queries' : `result sizes differ from raw: ${diffs.join('; ')}`;
}

// ---------------------------------------------------------------- main

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const log = (m: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
  const needs = (...ps: Part[]) => ps.some((p) => o.parts.has(p));
  const tmp = mkdtempSync(join(tmpdir(), 'stackd-suite-'));
  const out: string[] = [];
  const print = (line = '') => {
    out.push(line);
    process.stdout.write(line + '\n');
  };
  const figures: Record<string, unknown> = { options: { ...o, parts: [...o.parts] } };
  const targets: [string, string, number, string, boolean][] = [];
  const target = (figure: string, value: number, goal: string, ok: boolean, shown = fmt(value, 2)) => targets.push([figure, shown, value, goal, ok]);
  try {
    print(`# stackd benchmark suite — ${new Date().toISOString()}`);
    print();
    print(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${fmt(totalmem() / 2 ** 30, 1)} GiB RAM; load average at start ${loadAvg()}`);
    const products = productsForTriples(o.triples);
    const file = join(tmp, 'bsbm.nt');
    const needsData = needs('import', 'restart', 'query', 'memory', 'peer');
    let triples = 0;
    let cuts: number[] = [];
    let mixPath: string | null = null;
    let rounds = 0;
    if (needsData) {
      log(`generating ${products} products (~${o.triples} triples)`);
      triples = (await writeDataset(products, file, null)).triples;
      cuts = lineCuts(file, 63 * MIB);
      print(`dataset: BSBM-shaped, ${fmt(products)} products, ${fmt(triples)} triples, ${fmt(statSync(file).size / MIB, 1)} MiB N-Triples (${cuts.length - 1} import request(s) ≤ 63 MiB)`);
      if (needs('query', 'peer')) {
        rounds = o.rounds ?? (triples <= 200_000 ? 50 : 20);
        const all = queryMix(products, rounds + 1);
        const mix: MixFile = { warmup: all.slice(0, QUERY_NAMES.length), queries: all.slice(QUERY_NAMES.length) };
        mixPath = join(tmp, 'mix.json');
        writeFileSync(mixPath, JSON.stringify(mix));
        print(`query mix: the 12 BSBM explore queries (bench/bsbm/queries.ts), 1 untimed warm-up round + ${rounds} timed rounds = ${mix.queries.length} queries`);
      }
    }
    print();

    // Raw baseline: load (and the mix in-process) in a child process.
    let raw: RawResult | null = null;
    let distinct = 0;
    if (needs('import', 'restart', 'query', 'memory', 'peer')) {
      log('raw Oxigraph: load' + (needs('query', 'peer') ? ' + in-process query mix' : ''));
      const args = [RAW_CHILD, '--file', file, '--chunk-lines', String(o.chunkLines)];
      if (needs('query', 'peer') && mixPath) args.push('--mix', mixPath);
      raw = await runJsonChild<RawResult>(args);
      // The generator may emit a statement twice (a product drawing the same feature twice): stores hold it once.
      print(`distinct triples (raw store size): ${fmt(raw.size)}`);
      distinct = raw.size;
      figures.raw = raw;
    }

    const dataDir = join(tmp, 'data');
    let imp: ImportFigures | null = null;
    if (needs('import', 'restart', 'query', 'memory')) {
      log('stackd: import through /v1/graph/import/rdf');
      imp = await stackdImport(dataDir, file, cuts, triples, distinct);
      figures.import = imp;
    }

    let rs1: RestartFigures | null = null;
    let rs2: RestartFigures | null = null;
    let c1: MixRun | null = null;
    let c4: MixRun | null = null;
    if (needs('restart', 'memory', 'query')) {
      log('stackd: restart with 1 query worker (default)');
      const r1 = await restart(dataDir, []);
      rs1 = r1.r;
      if (rs1.count !== distinct) throw new Error(`after restart stackd answers COUNT ${rs1.count}, expected ${distinct}`);
      await r1.s.stop();
      log('stackd: restart with 2 query workers');
      const r2 = await restart(dataDir, ['--query-workers', '2']);
      rs2 = r2.r;
      try {
        if (needs('query') && mixPath) {
          log('stackd: query mix, concurrency 1 (external client process)');
          c1 = await runClient(`${r2.s.url}/sparql`, mixPath, 1, r2.s.token);
          log('stackd: query mix, concurrency 4');
          c4 = await runClient(`${r2.s.url}/sparql`, mixPath, 4, r2.s.token);
          figures.query = { c1, c4 };
        }
      } finally {
        await r2.s.stop();
      }
      figures.restart = { workers1: rs1, workers2: rs2 };
    }

    let commit: { raw: ReturnType<typeof rawSqlite>; rows: [number, Awaited<ReturnType<typeof commitsAt>>][] } | null = null;
    if (needs('commit')) {
      log('commits: raw SQLite, then stackd at concurrency 1, 8, 32');
      const rawTx = rawSqlite(o.commits);
      const s = await startBenchServer(join(tmp, 'commit-data'));
      try {
        await commitsAt(s, 4, 200); // warm-up
        const rows: [number, Awaited<ReturnType<typeof commitsAt>>][] = [];
        for (const c of [1, 8, 32]) rows.push([c, await commitsAt(s, c, o.commits)]);
        commit = { raw: rawTx, rows };
        figures.commit = commit;
      } finally {
        await s.stop();
      }
    }

    let peer: PeerFigures | null = null;
    if (needs('peer')) {
      log('peer: Comunica over an N3.js store');
      peer = await runPeer(file, cuts, triples, distinct, mixPath, o.peerTimeLimitS, log);
      figures.peer = peer;
    }

    // ------------------------------------------------------------ tables
    if (raw && imp) {
      print('## Import (N-Triples)');
      print();
      print('| system | time ms | triples/s | vs raw | CPU ms | RSS after MiB |');
      print('|---|---|---|---|---|---|');
      const rawTps = triples / (raw.loadMs / 1000);
      print(`| raw Oxigraph Store.load (in-process, ${raw.loads} load() calls) | ${fmt(raw.loadMs)} | ${fmt(rawTps)} | 1.00 | ${fmt(raw.cpuMs)} | ${fmt(raw.rssMiB)} |`);
      print(`| stackd POST /v1/graph/import/rdf (${imp.requests} request(s), to the last ack) | ${fmt(imp.ms)} | ${fmt(imp.triplesPerSec)} | ${fmt(ratio(imp.triplesPerSec, rawTps), 2)} | ${fmt(imp.cpuMs)} | ${fmt(imp.rssMiB)} |`);
      if (peer) print(`| peer: Comunica/N3 POST /import (${cuts.length - 1} request(s)) | ${fmt(peer.importMs)} | ${fmt(peer.triplesPerSec)} | ${fmt(ratio(peer.triplesPerSec, rawTps), 2)} | — | ${fmt(peer.rssMiB)} |`);
      print();
      if (o.parts.has('import')) target('import throughput vs raw Store.load', ratio(imp.triplesPerSec, rawTps), '≥ 0.7×', ratio(imp.triplesPerSec, rawTps) >= 0.7);
    }
    if (raw && rs1 && rs2) {
      print('## Restart (spawn → first COUNT answered over /sparql)');
      print();
      print('| | ms | vs raw load | listening after ms | replica build ms | CPU ms | RSS MiB |');
      print('|---|---|---|---|---|---|---|');
      print(`| raw load of the same data | ${fmt(raw.loadMs)} | 1.00 | — | — | ${fmt(raw.cpuMs)} | ${fmt(raw.rssMiB)} |`);
      print(`| stackd, 1 query worker (default) | ${fmt(rs1.ms)} | ${fmt(ratio(rs1.ms, raw.loadMs), 2)} | ${fmt(rs1.listeningMs)} | ${fmt(rs1.buildMs ?? NaN)} | ${fmt(rs1.cpuMs)} | ${fmt(rs1.rssMiB)} |`);
      print(`| stackd, 2 query workers | ${fmt(rs2.ms)} | ${fmt(ratio(rs2.ms, raw.loadMs), 2)} | ${fmt(rs2.listeningMs)} | ${fmt(rs2.buildMs ?? NaN)} | ${fmt(rs2.cpuMs)} | ${fmt(rs2.rssMiB)} |`);
      print();
      if (o.parts.has('restart')) target('restart vs raw load (1 query worker)', ratio(rs1.ms, raw.loadMs), '≤ 1.3×', ratio(rs1.ms, raw.loadMs) <= 1.3);
    }
    if (raw && rs1 && rs2 && imp) {
      print('## Memory (RSS)');
      print();
      const rawData = raw.rssMiB - raw.baseRssMiB;
      const perReplica = rs2.rssMiB - rs1.rssMiB;
      print('| | MiB | notes |');
      print('|---|---|---|');
      print(`| raw process holding the data | ${fmt(raw.rssMiB)} | ${fmt(raw.baseRssMiB)} MiB with oxigraph loaded and an empty store → the store's data ${fmt(rawData)} MiB |`);
      print(`| stackd after the import | ${fmt(imp.rssMiB)} | 1 replica; WASM memory grown while loading is kept by the engine |`);
      print(`| stackd after restart, 1 query worker | ${fmt(rs1.rssMiB)} | main thread, writer, SQLite cache, 1 replica |`);
      print(`| stackd after restart, 2 query workers | ${fmt(rs2.rssMiB)} | |`);
      print(`| one more head replica (2 workers − 1 worker) | ${fmt(perReplica)} | ${fmt(ratio(perReplica, rawData), 2)} × the raw store's data, ${fmt(ratio(perReplica, raw.rssMiB), 2)} × the raw process |`);
      print();
      if (o.parts.has('memory')) target('RSS per head replica vs raw store (its data)', ratio(perReplica, rawData), '≤ 1.5×', ratio(perReplica, rawData) <= 1.5);
    }
    if (raw?.mix && c1 && c4) {
      print('## Query mix over HTTP /sparql (external client process, 2 query workers)');
      print();
      const rawQps = qps(raw.mix);
      print('| run | queries | time ms | queries/s | vs raw | vs c=1 | errors | CPU ms |');
      print('|---|---|---|---|---|---|---|---|');
      print(`| raw in-process, sequential | ${raw.mix.queries} | ${fmt(raw.mix.totalMs)} | ${fmt(rawQps, 1)} | 1.00 | — | 0 | ${fmt(raw.mix.cpuMs ?? NaN)} |`);
      print(`| stackd c=1 | ${c1.queries} | ${fmt(c1.totalMs)} | ${fmt(qps(c1), 1)} | ${fmt(ratio(qps(c1), rawQps), 2)} | 1.00 | ${c1.errors} | — |`);
      print(`| stackd c=4 | ${c4.queries} | ${fmt(c4.totalMs)} | ${fmt(qps(c4), 1)} | ${fmt(ratio(qps(c4), rawQps), 2)} | ${fmt(ratio(qps(c4), qps(c1)), 2)} | ${c4.errors} | — |`);
      if (peer?.mix) print(`| peer Comunica/N3 c=1 | ${peer.mix.queries} | ${fmt(peer.mix.totalMs)} | ${fmt(qps(peer.mix), 2)} | ${fmt(ratio(qps(peer.mix), rawQps), 3)} | — | ${peer.mix.errors} | — |`);
      print();
      for (const [n, m] of [['stackd c=1', c1], ['stackd c=4', c4]] as const) if (m.firstError) print(`${n} first error: ${m.firstError}`);
      print(`stackd: ${sizeCheck(raw.mix.sizes, c1.sizes)}.${peer?.mix ? ` Peer: ${sizeCheck(raw.mix.sizes, peer.mix.sizes)}.` : ''}`);
      print();
      const runs: [string, MixRun][] = [['raw', raw.mix], ['stackd c=1', c1], ['stackd c=4', c4]];
      if (peer?.mix) runs.push(['peer c=1', peer.mix]);
      for (const l of perQueryTable(rounds, runs)) print(l);
      print();
      target('query mix c=1 vs in-process raw', ratio(qps(c1), rawQps), '≥ 0.8×', ratio(qps(c1), rawQps) >= 0.8);
      target('query mix c=4 vs c=1 (2 query workers)', ratio(qps(c4), qps(c1)), '≥ 1.6×', ratio(qps(c4), qps(c1)) >= 1.6);
    }
    if (commit) {
      print('## Single-triplet commits (POST /v1/graph/commit, each fsynced before its ack)');
      print();
      print('| | commits/s | p50 ms | p99 ms | vs c=1 |');
      print('|---|---|---|---|---|');
      print(`| raw SQLite (WAL, synchronous=FULL, 1 row per transaction) | ${fmt(commit.raw.perSec)} | ${fmt(commit.raw.p50, 3)} | ${fmt(commit.raw.p99, 3)} | — |`);
      const base = commit.rows[0]![1].perSec;
      for (const [c, r] of commit.rows) print(`| stackd c=${c} | ${fmt(r.perSec)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.perSec / base, 2)} |`);
      print();
      const r32 = commit.rows[2]![1].perSec / base;
      target('commits/s c=32 vs c=1 (group commit)', r32, '≥ 4×', r32 >= 4);
    }
    if (peer && imp) {
      target('import: stackd vs peer (Comunica/N3)', ratio(imp.triplesPerSec, peer.triplesPerSec), '≥ 10×', ratio(imp.triplesPerSec, peer.triplesPerSec) >= 10);
      if (peer.mix && c1) target('query mix c=1: stackd vs peer', ratio(qps(c1), qps(peer.mix)), '≥ 10×', ratio(qps(c1), qps(peer.mix)) >= 10);
    }

    if (needs('scale')) {
      if (!existsSync(SCALE)) print('## Scale ceiling\n\n(bench/scale.ts is not built; skipped)\n');
      else {
        log('scale ceiling (bench/scale.ts)');
        print('## Scale ceiling (bench/scale.ts)');
        print();
        const child = spawn(process.execPath, [SCALE, ...o.scaleArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
        child.stdout!.setEncoding('utf8').on('data', (d: string) => {
          out.push(d);
          process.stdout.write(d);
        });
        const [code] = (await once(child, 'exit')) as [number | null];
        if (code !== 0) print(`(bench/scale.ts exited with ${code})`);
        print();
      }
    }

    if (targets.length) {
      print('## Targets (this run)');
      print();
      print('| figure | value | target | |');
      print('|---|---|---|---|');
      for (const [figure, shown, , goal, ok] of targets) print(`| ${figure} | ${shown}× | ${goal} | ${verdict(ok)} |`);
      print();
    }
    print(`load average at end ${loadAvg()}`);
    figures.targets = targets.map(([figure, , value, goal, ok]) => ({ figure, value, goal, ok }));
    if (o.json) writeFileSync(o.json, JSON.stringify(figures, null, 1));
  } finally {
    if (o.keep) log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
