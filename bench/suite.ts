/**
 * The benchmark suite (issue 5): one generated BSBM-shaped dataset, and in one run on it
 *
 *   import   POST /v1/graph/import/rdf vs raw in-process Store.load        (triples/s)
 *   restart  process spawn → first query answered vs raw load of the data   (ms)
 *   query    the BSBM explore mix over HTTP /sparql from an external client process, at
 *            concurrency 1 and 4 (two query workers) vs the same queries in-process
 *   memory   RSS with the dataset loaded: per head replica vs a raw store holding it
 *   commit   single-triplet commits at concurrency 1, 8, 32 vs raw fsync'd SQLite
 *   peer     the same import and query mix against each JavaScript peer (--peers): Comunica
 *            over an in-memory N3.js store, quadstore on LevelDB (on disk) with quadstore-comunica
 *   scale    the scale ceiling (bench/scale.ts, run as a child process)
 *
 *   npm run bench                                   # everything, 1M triples
 *   npm run bench -- --triples 100000               # 100k
 *   npm run bench:query -- --triples 100000         # one part (plus what it needs)
 *
 * Options: --triples N (1000000) · --parts a,b,… (all) · --repeat N repetitions of each
 * measurement (3) · --rounds N timed rounds of the 12-query mix per repetition (auto) ·
 * --peers a,b,… (all: comunica-n3, quadstore) · --peer-time-limit-s N for each peer's mix (300) ·
 * --commits N (2000) · --json FILE (every repetition's figures)
 * · --keep (keep the temp dir) · --chunk-lines N (raw load, 2000) · --scale-args "…" (passed
 * to bench/scale.ts).
 *
 * Repetitions: on a shared VM the same raw run varies by 2× from one moment to the next, so
 * one raw run against one stackd run says little. Each figure is measured --repeat times in
 * this run, raw and stackd alternating (raw load, stackd import, raw load, …; per query round
 * raw, stackd c=1, stackd c=4; per commit repetition raw SQLite, then stackd c=1, 8, 32) so
 * that drift hits both sides alike. Tables show medians; a ratio of paired measurements is
 * the median of the per-repetition ratios, and each table is followed by the per-repetition
 * values. Restart is not paired: it is the median of N restarts over the median raw load.
 * Measured once: the 2-worker restart (the memory figure; that server then serves every query
 * round) and each peer (its ratios are against the raw medians).
 * Nothing is asserted: figures are printed with the targets beside them.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { productsForTriples, writeDataset } from './bsbm/generate.js';
import { QUERY_NAMES, queryMix } from './bsbm/queries.js';
import { commitSweep, commitsAt, rawSqlite } from './commit.js';
import { readMix, type MixFile, type MixRun } from './lib/mix.js';
import { loadAvg, procCpuMs, procMem, treeMem } from './lib/proc.js';
import { startRawChild, type RawChild, type RawResult } from './lib/raw-oxigraph.js';
import { firstAnswer, firstCount, postFileInChunks, request, runJsonChild, spawnServer, type ServerProcess } from './lib/server-process.js';
import { startBenchServer } from './lib/stackd.js';
import { fmt, fmtReps, median, medianRatio, summarize } from './lib/stats.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const RAW_CHILD = here('./lib/raw-oxigraph.js');
const MIX_CLIENT = here('./lib/mix-client.js');
const SCALE = here('./scale.js');
const MIB = 1024 * 1024;
const ALL_PARTS = ['import', 'restart', 'query', 'memory', 'commit', 'peer', 'scale'] as const;
type Part = (typeof ALL_PARTS)[number];

/**
 * The JavaScript peers: HTTP servers with one interface (bench/peer/http.ts), each what a Node
 * user would otherwise pick for a local SPARQL endpoint. A peer with a data dir gets one in the
 * suite's temp dir (removed with it), and its size on disk is reported.
 */
const PEERS = {
  'comunica-n3': { label: 'Comunica/N3 (in memory)', script: here('./peer/comunica-server.js'), dataDir: false },
  quadstore: { label: 'quadstore/LevelDB + quadstore-comunica (on disk)', script: here('./peer/quadstore-server.js'), dataDir: true },
} as const;
type PeerName = keyof typeof PEERS;
const ALL_PEERS = Object.keys(PEERS) as PeerName[];

interface Options {
  triples: number;
  parts: Set<Part>;
  repeat: number;
  rounds: number | null;
  peers: PeerName[];
  peerTimeLimitS: number;
  commits: number;
  json: string | null;
  keep: boolean;
  chunkLines: number;
  scaleArgs: string[];
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    triples: 1_000_000, parts: new Set(ALL_PARTS), repeat: 3, rounds: null, peers: ALL_PEERS, peerTimeLimitS: 300, commits: 2000,
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
      case '--repeat': o.repeat = num(a, argv[++i]); break;
      case '--rounds': o.rounds = num(a, argv[++i]); break;
      case '--peer-time-limit-s': o.peerTimeLimitS = num(a, argv[++i]); break;
      case '--commits': o.commits = num(a, argv[++i]); break;
      case '--chunk-lines': o.chunkLines = num(a, argv[++i]); break;
      case '--json': o.json = argv[++i] ?? null; break;
      case '--keep': o.keep = true; break;
      case '--scale-args': o.scaleArgs = (argv[++i] ?? '').split(/\s+/).filter(Boolean); break;
      case '--peers': {
        const peers = (argv[++i] ?? '').split(',').filter(Boolean);
        for (const p of peers) if (!(ALL_PEERS as string[]).includes(p)) throw new Error(`unknown peer ${p}; peers: ${ALL_PEERS.join(', ')}`);
        o.peers = [...new Set(peers as PeerName[])];
        break;
      }
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

/**
 * p, or an error as soon as the server exits first: firstCount retries a refused connection
 * and `ready` never comes from a dead server, so a crash would otherwise hang the suite.
 */
function whileAlive<T>(s: ServerProcess, p: Promise<T>, what: string): Promise<T> {
  const died = s.exited.then((code): never => {
    throw new Error(`stackd exited (code ${code}) before ${what}; last log line: ${JSON.stringify(s.logs[s.logs.length - 1] ?? null)}`);
  });
  return Promise.race([p, died]);
}

async function stackdImport(dir: string, file: string, cuts: number[], triples: number, distinct: number): Promise<ImportFigures> {
  const s = await spawnServer(dir);
  try {
    await whileAlive(s, s.ready, 'ready');
    const cpu0 = procCpuMs(s.pid);
    const t0 = performance.now();
    await postFileInChunks(s, '/v1/graph/import/rdf', file, cuts, 'application/n-triples');
    const ms = performance.now() - t0;
    const cpuMs = procCpuMs(s.pid) - cpu0;
    const count = await whileAlive(s, firstCount(s), 'answering COUNT');
    if (count !== distinct) throw new Error(`stackd holds ${count} triples after the import, expected ${distinct}`);
    return { ms, triplesPerSec: triples / (ms / 1000), count, cpuMs, rssMiB: treeMem(s.pid).rssMiB, requests: cuts.length - 1 };
  } finally {
    await s.stop();
  }
}

/**
 * Spawn → first query answered (`ASK`, so the figure is the restart and not a COUNT's scan of
 * the store); then, untimed, a COUNT that must hold every triple. The server is left running.
 */
async function restart(dir: string, args: string[]): Promise<{ s: ServerProcess; r: RestartFigures }> {
  const s = await spawnServer(dir, { args });
  try {
    const listeningMs = performance.now() - s.spawnedAt;
    await whileAlive(s, firstAnswer(s), 'answering a query');
    const ms = performance.now() - s.spawnedAt;
    const cpuMs = procCpuMs(s.pid);
    const count = await whileAlive(s, firstCount(s), 'answering COUNT');
    await whileAlive(s, s.ready, 'ready');
    const built = s.logs.filter((m) => m.msg === 'head replica ready').map((m) => m.build_ms as number);
    // Let the build's garbage settle before reading RSS (what a steady server holds).
    await new Promise((r) => setTimeout(r, 1500));
    return { s, r: { ms, listeningMs, buildMs: built.length ? Math.max(...built) : null, count, rssMiB: treeMem(s.pid).rssMiB, cpuMs } };
  } catch (e) {
    await s.stop(); // the caller never gets the handle to stop it
    throw e;
  }
}

async function runClient(endpoint: string, mixPath: string, concurrency: number, token: string | null, timeLimitS = 0): Promise<MixRun> {
  const args = [MIX_CLIENT, '--endpoint', endpoint, '--mix', mixPath, '--concurrency', String(concurrency)];
  if (token) args.push('--token', token);
  if (timeLimitS) args.push('--time-limit-s', String(timeLimitS));
  return runJsonChild<MixRun>(args);
}

interface PeerFigures {
  name: PeerName;
  label: string;
  /** Import, first byte sent → last reply (which carries the store's size: see countMs). */
  importMs: number;
  triplesPerSec: number;
  size: number;
  /** User + system CPU of the peer process over the import. */
  cpuMs: number;
  rssMiB: number;
  /** The peer's data dir after the import (durable peers only). */
  diskMiB: number | null;
  /** Of importMs, what the peer spent counting its quads for the replies (where it has no O(1) size). */
  countMs: number | null;
  /** Timed queries in the mix; mix.queries is how many ran before the time limit. */
  mixQueries: number;
  mix: MixRun | null;
  /** Why the mix gave no figures: the client failed (e.g. a query the engine cannot answer). */
  mixError: string | null;
  /** The import or the process failed: no figures. */
  error: string | null;
}

/** Bytes under a directory, in MiB. */
function dirMiB(dir: string): number {
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) bytes += statSync(join(e.parentPath, e.name)).size;
  return bytes / MIB;
}

/**
 * After the mix client failed: which warm-up queries the peer does not answer (the client
 * stops at the first and exits; its message went to stderr).
 */
async function failingQueries(peer: { port: number; token: string }, mixPath: string): Promise<string> {
  const bad: string[] = [];
  for (const q of readMix(mixPath).warmup) {
    const r = await request(peer, 'GET', `/sparql?query=${encodeURIComponent(q.text)}`, { accept: q.accept }).catch((e: Error) => ({ status: 0, text: e.message }));
    if (r.status !== 200) bad.push(`${q.name}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
  }
  return bad.length ? bad.join('; ') : 'every warm-up query answers when sent alone';
}

/**
 * One peer: spawn, POST the same chunks as stackd's import, check its size, then the mix at
 * c=1 with a time limit. The client checks the limit only between queries, so a watchdog
 * stops the server if one query runs far past it: that query then counts as an error.
 */
async function runPeer(name: PeerName, tmp: string, file: string, cuts: number[], triples: number, distinct: number, mixPath: string | null, timeLimitS: number, log: Log): Promise<PeerFigures> {
  const spec = PEERS[name];
  const dataDir = spec.dataDir ? join(tmp, `peer-${name}`) : null;
  const args = ['--max-old-space-size=16384', spec.script, ...(dataDir ? ['--dir', dataDir] : [])];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(proc, 'exit');
  let watchdog: NodeJS.Timeout | undefined;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      proc.stdout!.setEncoding('utf8').once('data', (d: string) => resolve((JSON.parse(d.split('\n')[0]!) as { port: number }).port));
      proc.once('exit', (c) => reject(new Error(`peer ${name} exited ${c}`)));
    });
    const peer = { port, token: '' };
    const cpu0 = procCpuMs(proc.pid!);
    const t0 = performance.now();
    const replies = (await postFileInChunks(peer, '/import', file, cuts, 'application/n-triples')).map((r) => JSON.parse(r) as { size: number; countMs?: number });
    const importMs = performance.now() - t0;
    const cpuMs = procCpuMs(proc.pid!) - cpu0;
    const size = replies[replies.length - 1]!.size;
    if (size !== distinct) throw new Error(`peer ${name} holds ${size} triples, expected ${distinct}`);
    const countMs = replies.some((r) => r.countMs !== undefined) ? sum(replies.map((r) => r.countMs ?? 0)) : null;
    const rssMiB = procMem(proc.pid!)!.rssMiB;
    const diskMiB = dataDir ? dirMiB(dataDir) : null;
    log(`  ${name} import ${fmt(importMs)} ms; running the mix (time limit ${timeLimitS} s)`);
    let mix: MixRun | null = null;
    let mixError: string | null = null;
    if (mixPath) {
      const graceS = Math.max(60, timeLimitS / 2);
      watchdog = setTimeout(() => {
        log(`  ${name}: a query is still running ${graceS} s past the time limit; stopping the peer`);
        proc.kill('SIGKILL');
      }, (timeLimitS + graceS) * 1000);
      try {
        mix = await runClient(`http://127.0.0.1:${port}/sparql`, mixPath, 1, null, timeLimitS);
      } catch (e) {
        mixError = `${(e as Error).message}; ${proc.exitCode === null && proc.signalCode === null ? await failingQueries(peer, mixPath) : 'the peer was stopped'}`;
        log(`  ${name}: the mix failed: ${mixError}`);
      }
    }
    // Counting is the harness's size check, not part of loading: left out of the rate.
    return { name, label: spec.label, importMs, triplesPerSec: triples / ((importMs - (countMs ?? 0)) / 1000), size, cpuMs, rssMiB, diskMiB, countMs, mixQueries: mixPath ? readMix(mixPath).queries.length : 0, mix, mixError, error: null };
  } finally {
    clearTimeout(watchdog);
    proc.kill('SIGTERM');
    await exited;
  }
}

// ---------------------------------------------------------------- repetitions

type Log = (m: string) => void;
type Rate = ReturnType<typeof rawSqlite>;
const COMMIT_CONCURRENCY = [1, 8, 32] as const;

/** The generated inputs every part shares. */
interface Data { file: string; cuts: number[]; triples: number; mixPath: string | null }

interface ImportRep { raw: RawResult; stackd: ImportFigures | null }

/**
 * o.repeat repetitions of: a fresh raw child load, then (withStackd) a stackd import into a
 * fresh data dir. Only the last data dir is kept (restart and query run on it); with stay, the
 * last raw child is a --stay child kept alive for the query rounds. The caller exits it.
 */
async function importReps(o: Options, d: Data, tmp: string, withStackd: boolean, stay: boolean, log: Log): Promise<{ reps: ImportRep[]; child: RawChild | null; dataDir: string }> {
  const reps: ImportRep[] = [];
  let child: RawChild | null = null;
  let dataDir = '';
  const rawArgs = ['--file', d.file, '--chunk-lines', String(o.chunkLines)];
  try {
    for (let r = 1; r <= o.repeat; r++) {
      const last = r === o.repeat;
      const tag = `rep ${r}/${o.repeat}`;
      log(`${tag}: raw Oxigraph load${last && stay ? ' (this child stays for the query rounds)' : ''}`);
      let raw: RawResult;
      if (last && stay) {
        child = await startRawChild([...rawArgs, '--mix', d.mixPath!]);
        raw = child.result;
      } else raw = await runJsonChild<RawResult>([RAW_CHILD, ...rawArgs]);
      if (reps[0] && raw.size !== reps[0].raw.size) throw new Error(`raw store size ${raw.size} in ${tag}, ${reps[0].raw.size} before`);
      let stackd: ImportFigures | null = null;
      if (withStackd) {
        dataDir = join(tmp, `data-${r}`);
        log(`${tag}: stackd import through /v1/graph/import/rdf`);
        stackd = await stackdImport(dataDir, d.file, d.cuts, d.triples, raw.size);
        // Earlier data dirs are not used again; at 1M triples they would only fill the disk.
        if (!last) rmSync(dataDir, { recursive: true, force: true });
      }
      reps.push({ raw, stackd });
    }
  } catch (e) {
    await child?.exit();
    throw e;
  }
  return { reps, child, dataDir };
}

/** o.repeat restarts (1 query worker) of the same data dir, each stopped after its figures. */
async function restartReps(n: number, dataDir: string, distinct: number, log: Log): Promise<RestartFigures[]> {
  const reps: RestartFigures[] = [];
  for (let r = 1; r <= n; r++) {
    log(`restart ${r}/${n}: stackd with 1 query worker (default)`);
    const { s, r: fig } = await restart(dataDir, []);
    await s.stop();
    if (fig.count !== distinct) throw new Error(`after restart stackd answers COUNT ${fig.count}, expected ${distinct}`);
    reps.push(fig);
  }
  return reps;
}

interface MixRounds { raw: MixRun[]; c1: MixRun[]; c4: MixRun[] }

/** n rounds of: the raw child's in-process mix, then (given a server) stackd at c=1 and c=4. */
async function mixRounds(n: number, child: RawChild, mixPath: string, server: ServerProcess | null, log: Log): Promise<MixRounds> {
  const rounds: MixRounds = { raw: [], c1: [], c4: [] };
  for (let r = 1; r <= n; r++) {
    log(`query round ${r}/${n}: raw in-process${server ? ', stackd c=1, stackd c=4 (external client process)' : ''}`);
    rounds.raw.push(await child.mix());
    if (!server) continue;
    rounds.c1.push(await runClient(`${server.url}/sparql`, mixPath, 1, server.token));
    rounds.c4.push(await runClient(`${server.url}/sparql`, mixPath, 4, server.token));
  }
  return rounds;
}

interface CommitRep { raw: Rate; stackd: Rate[] }

/** n repetitions of: raw SQLite, then stackd at each of COMMIT_CONCURRENCY, on one warmed-up server. */
async function commitReps(n: number, commits: number, dataDir: string, log: Log): Promise<CommitRep[]> {
  const s = await startBenchServer(dataDir);
  try {
    await commitsAt(s, 4, 200); // warm-up
    const reps: CommitRep[] = [];
    for (let r = 1; r <= n; r++) {
      log(`commits ${r}/${n}: raw SQLite, then stackd at concurrency ${COMMIT_CONCURRENCY.join(', ')}`);
      const raw = rawSqlite(commits);
      const stackd: Rate[] = [];
      // Interleaved slices (c=1, 8, 32, c=1, …): a slow phase of the machine hits every concurrency alike.
      stackd.push(...(await commitSweep(s, COMMIT_CONCURRENCY, commits)));
      reps.push({ raw, stackd });
    }
    return reps;
  } finally {
    await s.stop();
  }
}

// ---------------------------------------------------------------- report

type Print = (line?: string) => void;
type Target = (figure: string, value: number, goal: string, ok: boolean) => void;

const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);
const qps = (m: MixRun) => m.queries / (m.totalMs / 1000);
const verdict = (ok: boolean) => (ok ? 'met' : '**NOT met**');
const medianOf = <T>(xs: T[], f: (x: T) => number) => median(xs.map(f));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** p50/p99 per query name, each system's latencies pooled over all its rounds. */
function perQueryTable(rounds: number, runs: [string, MixRun[]][]): string[] {
  const out = [`| query | ${runs.map(([n]) => `${n} p50 / p99 ms`).join(' | ')} |`, `|---|${runs.map(() => '---').join('|')}|`];
  const cell = (lat: number[]) => {
    const s = summarize(lat);
    return s.n ? `${fmt(s.p50, 2)} / ${fmt(s.p99, 2)}` : '—';
  };
  QUERY_NAMES.forEach((name, qi) => {
    const cells = runs.map(([, ms]) => cell(ms.flatMap((m) => m.latencies.filter((_, i) => i % QUERY_NAMES.length === qi))));
    out.push(`| ${name} | ${cells.join(' | ')} |`);
  });
  const reps = Math.max(...runs.map(([, ms]) => ms.length));
  out.push(`| all (${rounds} rounds × ${reps} rep(s)) | ${runs.map(([, ms]) => cell(ms.flatMap((m) => m.latencies))).join(' | ')} |`);
  return out;
}

function sizeCheck(reference: number[], other: number[]): string {
  const diffs = QUERY_NAMES.map((n, i) => (reference[i] === other[i] ? null : `${n.split(' ')[0]}: ${other[i]} vs ${reference[i]}`)).filter(Boolean);
  return diffs.length === 0 ? 'same result sizes as raw for all 12 warm-up queries' : `result sizes differ from raw: ${diffs.join('; ')}`;
}

/** sizeCheck over every round's run; each round's client did its own warm-up. */
function sizeCheckRounds(reference: number[], runs: [string, MixRun[]][]): string {
  const bad = runs.flatMap(([n, ms]) => ms.map((m, i) => [`${n} round ${i + 1}`, sizeCheck(reference, m.sizes)] as const)).filter(([, v]) => v.startsWith('result sizes differ'));
  return bad.length === 0 ? 'same result sizes as raw for all 12 warm-up queries, in every round' : bad.map(([n, v]) => `${n}: ${v}`).join('. ');
}

/** The peers whose import and checks went through (the others are reported as failed). */
const peersOk = (peers: PeerFigures[]) => peers.filter((p) => p.error === null);

function peerImportRows(print: Print, peers: PeerFigures[], requests: number, rawMedTps: number) {
  for (const p of peers) {
    if (p.error !== null) print(`| peer: ${p.label} POST /import | failed: ${p.error} | | | | |`);
    else print(`| peer: ${p.label} POST /import (${requests} request(s), once) | ${fmt(p.importMs)} | ${fmt(p.triplesPerSec)} | ${fmt(ratio(p.triplesPerSec, rawMedTps), 2)} (vs median raw) | ${fmt(p.cpuMs)} | ${fmt(p.rssMiB)} |`);
  }
}

/** What the import rows leave out for durable peers: disk use and the counting in the replies. */
function peerImportNotes(print: Print, peers: PeerFigures[]) {
  for (const p of peersOk(peers)) {
    const notes = [];
    if (p.diskMiB !== null) notes.push(`${fmt(p.diskMiB, 1)} MiB on disk after the import`);
    if (p.countMs !== null) notes.push(`${fmt(p.countMs)} ms of its import time spent counting quads for the replies (left out of its triples/s)`);
    if (notes.length) print(`${p.name}: ${notes.join('; ')}.`);
  }
}

function importTable(print: Print, target: Target, o: Options, triples: number, reps: ImportRep[], peers: PeerFigures[], requests: number) {
  const stackd = reps[0]!.stackd ? reps.map((r) => r.stackd!) : null;
  const rawTps = reps.map((r) => triples / (r.raw.loadMs / 1000));
  const rawMedTps = median(rawTps);
  print(`## Import (N-Triples) — medians of ${reps.length} rep(s)${stackd ? ', raw and stackd alternating' : ''}`);
  print();
  print('| system | time ms | triples/s | vs raw (median of per-rep ratios) | CPU ms | RSS after MiB |');
  print('|---|---|---|---|---|---|');
  print(`| raw Oxigraph Store.load (in-process, ${reps[0]!.raw.loads} load() calls) | ${fmt(medianOf(reps, (r) => r.raw.loadMs))} | ${fmt(rawMedTps)} | 1.00 | ${fmt(medianOf(reps, (r) => r.raw.cpuMs))} | ${fmt(medianOf(reps, (r) => r.raw.rssMiB))} |`);
  const stackdTps = stackd?.map((s) => s.triplesPerSec) ?? [];
  const importRatio = stackd ? medianRatio(stackdTps, rawTps) : NaN;
  if (stackd) print(`| stackd POST /v1/graph/import/rdf (${requests} request(s), to the last ack) | ${fmt(medianOf(stackd, (s) => s.ms))} | ${fmt(median(stackdTps))} | ${fmt(importRatio, 2)} | ${fmt(medianOf(stackd, (s) => s.cpuMs))} | ${fmt(medianOf(stackd, (s) => s.rssMiB))} |`);
  peerImportRows(print, peers, requests, rawMedTps);
  print();
  peerImportNotes(print, peers);
  print(`per rep ms, raw: ${fmtReps(reps.map((r) => r.raw.loadMs))}${stackd ? `; stackd: ${fmtReps(stackd.map((s) => s.ms))}; stackd/raw triples/s: ${fmtReps(stackdTps.map((t, i) => t / rawTps[i]!), 2)}` : ''}`);
  print();
  if (stackd && o.parts.has('import')) target('import throughput vs raw Store.load', importRatio, '≥ 0.7×', importRatio >= 0.7);
}

function restartTable(print: Print, target: Target, o: Options, rawReps: RawResult[], rs1: RestartFigures[], rs2: RestartFigures) {
  const rawMs = medianOf(rawReps, (r) => r.loadMs);
  const ms1 = medianOf(rs1, (r) => r.ms);
  print(`## Restart (spawn → first query answered over /sparql: ASK; COUNT checked after, untimed) — medians of ${rs1.length} restart(s) and ${rawReps.length} raw load(s)`);
  print();
  print('| | ms | vs raw load (median / median) | listening after ms | replica build ms | CPU ms | RSS MiB |');
  print('|---|---|---|---|---|---|---|');
  print(`| raw load of the same data | ${fmt(rawMs)} | 1.00 | — | — | ${fmt(medianOf(rawReps, (r) => r.cpuMs))} | ${fmt(medianOf(rawReps, (r) => r.rssMiB))} |`);
  print(`| stackd, 1 query worker (default) | ${fmt(ms1)} | ${fmt(ratio(ms1, rawMs), 2)} | ${fmt(medianOf(rs1, (r) => r.listeningMs))} | ${fmt(medianOf(rs1, (r) => r.buildMs ?? NaN))} | ${fmt(medianOf(rs1, (r) => r.cpuMs))} | ${fmt(medianOf(rs1, (r) => r.rssMiB))} |`);
  print(`| stackd, 2 query workers (once) | ${fmt(rs2.ms)} | ${fmt(ratio(rs2.ms, rawMs), 2)} | ${fmt(rs2.listeningMs)} | ${fmt(rs2.buildMs ?? NaN)} | ${fmt(rs2.cpuMs)} | ${fmt(rs2.rssMiB)} |`);
  print();
  print(`per rep ms, stackd 1 worker: ${fmtReps(rs1.map((r) => r.ms))}; raw load: ${fmtReps(rawReps.map((r) => r.loadMs))}`);
  print();
  if (o.parts.has('restart')) target('restart vs raw load (1 query worker)', ratio(ms1, rawMs), '≤ 1.3×', ratio(ms1, rawMs) <= 1.3);
}

function memoryTable(print: Print, target: Target, o: Options, raw: RawResult, imp: ImportFigures[], rs1: RestartFigures[], rs2: RestartFigures) {
  const rawData = raw.rssMiB - raw.baseRssMiB;
  const rss1 = medianOf(rs1, (r) => r.rssMiB);
  const perReplica = rs2.rssMiB - rss1;
  print('## Memory (RSS)');
  print();
  print('| | MiB | notes |');
  print('|---|---|---|');
  print(`| raw process holding the data | ${fmt(raw.rssMiB)} | last raw load; ${fmt(raw.baseRssMiB)} MiB with oxigraph loaded and an empty store → the store's data ${fmt(rawData)} MiB |`);
  print(`| stackd after the import | ${fmt(medianOf(imp, (s) => s.rssMiB))} | median of the imports; 1 replica; WASM memory grown while loading is kept by the engine |`);
  print(`| stackd after restart, 1 query worker | ${fmt(rss1)} | median of the restarts; main thread, writer, SQLite cache, 1 replica |`);
  print(`| stackd after restart, 2 query workers | ${fmt(rs2.rssMiB)} | once |`);
  print(`| one more head replica (2 workers − 1 worker) | ${fmt(perReplica)} | ${fmt(ratio(perReplica, rawData), 2)} × the raw store's data, ${fmt(ratio(perReplica, raw.rssMiB), 2)} × the raw process |`);
  print();
  if (o.parts.has('memory')) target('RSS per head replica vs raw store (its data)', ratio(perReplica, rawData), '≤ 1.5×', ratio(perReplica, rawData) <= 1.5);
}

function queryTable(print: Print, target: Target, rounds: number, q: MixRounds, peers: PeerFigures[], peerTimeLimitS: number) {
  const withStackd = q.c1.length > 0;
  const rawQ = q.raw.map(qps);
  const c1Q = q.c1.map(qps);
  const c4Q = q.c4.map(qps);
  const rawMed = median(rawQ);
  const c1VsRaw = withStackd ? medianRatio(c1Q, rawQ) : NaN;
  const c4VsC1 = withStackd ? medianRatio(c4Q, c1Q) : NaN;
  const n = q.raw.length;
  print(withStackd
    ? `## Query mix over HTTP /sparql (external client process, 2 query workers) — medians of ${n} round(s), raw, c=1, c=4 in turn`
    : `## Query mix — raw in-process (medians of ${n} round(s)) and the peers over HTTP /sparql (external client process, c=1)`);
  print();
  print('| run | queries per round | time ms | queries/s | vs raw (median of per-round ratios) | vs c=1 (ditto) | errors (all rounds) | CPU ms |');
  print('|---|---|---|---|---|---|---|---|');
  print(`| raw in-process, sequential | ${q.raw[0]!.queries} | ${fmt(medianOf(q.raw, (m) => m.totalMs))} | ${fmt(rawMed, 1)} | 1.00 | — | 0 | ${fmt(medianOf(q.raw, (m) => m.cpuMs ?? NaN))} |`);
  if (withStackd) {
    print(`| stackd c=1 | ${q.c1[0]!.queries} | ${fmt(medianOf(q.c1, (m) => m.totalMs))} | ${fmt(median(c1Q), 1)} | ${fmt(c1VsRaw, 2)} | 1.00 | ${sum(q.c1.map((m) => m.errors))} | — |`);
    print(`| stackd c=4 | ${q.c4[0]!.queries} | ${fmt(medianOf(q.c4, (m) => m.totalMs))} | ${fmt(median(c4Q), 1)} | ${fmt(medianRatio(c4Q, rawQ), 2)} | ${fmt(c4VsC1, 2)} | ${sum(q.c4.map((m) => m.errors))} | — |`);
  }
  for (const p of peers) {
    if (p.error !== null || !p.mix) {
      print(`| peer ${p.label} c=1 | no figures: ${p.error ?? p.mixError ?? 'no mix'} | | | | | | |`);
      continue;
    }
    // Stopped by the time limit: q/s is over the queries it finished (the mix is in round order).
    const done = p.mix.queries < p.mixQueries ? `${p.mix.queries} of ${p.mixQueries} (${peerTimeLimitS} s limit reached)` : `${p.mix.queries}`;
    print(`| peer ${p.label} c=1 (once) | ${done} | ${fmt(p.mix.totalMs)} | ${fmt(qps(p.mix), 2)} | ${fmt(ratio(qps(p.mix), rawMed), 3)} (vs median raw) | — | ${p.mix.errors} | — |`);
  }
  print();
  if (withStackd) {
    print(`per round q/s, raw: ${fmtReps(rawQ, 1)}; c=1: ${fmtReps(c1Q, 1)}; c=4: ${fmtReps(c4Q, 1)}; c=1/raw: ${fmtReps(c1Q.map((v, i) => v / rawQ[i]!), 2)}; c=4/c=1: ${fmtReps(c4Q.map((v, i) => v / c1Q[i]!), 2)}`);
  } else print(`per round q/s, raw: ${fmtReps(rawQ, 1)}`);
  for (const [name, ms] of [['stackd c=1', q.c1], ['stackd c=4', q.c4]] as const) ms.forEach((m, i) => m.firstError && print(`${name} round ${i + 1} first error: ${m.firstError}`));
  const ran = peers.filter((p) => p.mix !== null);
  for (const p of ran) if (p.mix!.firstError) print(`${p.name} first error: ${p.mix!.firstError}`);
  const ref = q.raw[0]!.sizes;
  const checks = ran.map((p) => `${p.name}: ${sizeCheck(ref, p.mix!.sizes)}.`);
  if (withStackd) checks.unshift(`stackd: ${sizeCheckRounds(ref, [['c=1', q.c1], ['c=4', q.c4]])}.`);
  if (checks.length) print(checks.join(' '));
  print();
  const runs: [string, MixRun[]][] = [['raw', q.raw]];
  if (withStackd) runs.push(['stackd c=1', q.c1], ['stackd c=4', q.c4]);
  for (const p of ran) runs.push([`${p.name} c=1`, [p.mix!]]);
  for (const l of perQueryTable(rounds, runs)) print(l);
  print();
  if (!withStackd) return;
  target('query mix c=1 vs in-process raw', c1VsRaw, '≥ 0.8×', c1VsRaw >= 0.8);
  target('query mix c=4 vs c=1 (2 query workers)', c4VsC1, '≥ 1.6×', c4VsC1 >= 1.6);
}

function commitTable(print: Print, target: Target, reps: CommitRep[]) {
  const perSec = (ci: number) => reps.map((r) => r.stackd[ci]!.perSec);
  print(`## Single-triplet commits (POST /v1/graph/commit, each fsynced before its ack) — medians of ${reps.length} rep(s)`);
  print();
  print('| | commits/s | p50 ms (median of reps) | p99 ms (median of reps) | vs c=1 (median of per-rep ratios) |');
  print('|---|---|---|---|---|');
  print(`| raw SQLite (WAL, synchronous=FULL, 1 row per transaction) | ${fmt(medianOf(reps, (r) => r.raw.perSec))} | ${fmt(medianOf(reps, (r) => r.raw.p50), 3)} | ${fmt(medianOf(reps, (r) => r.raw.p99), 3)} | — |`);
  COMMIT_CONCURRENCY.forEach((c, ci) => {
    print(`| stackd c=${c} | ${fmt(median(perSec(ci)))} | ${fmt(medianOf(reps, (r) => r.stackd[ci]!.p50), 2)} | ${fmt(medianOf(reps, (r) => r.stackd[ci]!.p99), 2)} | ${fmt(medianRatio(perSec(ci), perSec(0)), 2)} |`);
  });
  print();
  print(`per rep commits/s, raw SQLite: ${fmtReps(reps.map((r) => r.raw.perSec))}; ${COMMIT_CONCURRENCY.map((c, ci) => `c=${c}: ${fmtReps(perSec(ci))}`).join('; ')}`);
  print();
  const r32 = medianRatio(perSec(COMMIT_CONCURRENCY.length - 1), perSec(0));
  target('commits/s c=32 vs c=1 (group commit)', r32, '≥ 4×', r32 >= 4);
}

// ---------------------------------------------------------------- main

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const log: Log = (m) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
  const needs = (...ps: Part[]) => ps.some((p) => o.parts.has(p));
  const tmp = mkdtempSync(join(tmpdir(), 'stackd-suite-'));
  const out: string[] = [];
  const print: Print = (line = '') => {
    out.push(line);
    process.stdout.write(line + '\n');
  };
  const figures: Record<string, unknown> = { options: { ...o, parts: [...o.parts] } };
  const targets: [string, string, number, string, boolean][] = [];
  const target: Target = (figure, value, goal, ok) => targets.push([figure, fmt(value, 2), value, goal, ok]);
  let rawChild: RawChild | null = null;
  try {
    print(`# stackd benchmark suite — ${new Date().toISOString()}`);
    print();
    print(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${fmt(totalmem() / 2 ** 30, 1)} GiB RAM; load average at start ${loadAvg()}`);
    print(`repetitions: ${o.repeat} (tables show medians; per-repetition values under each table)`);
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
        print(`query mix: the 12 BSBM explore queries (bench/bsbm/queries.ts), 1 untimed warm-up round + ${rounds} timed rounds = ${mix.queries.length} queries per repetition`);
      }
    }
    print();

    // Raw loads interleaved with stackd imports; the last raw child stays for the query rounds.
    let importRepsDone: ImportRep[] = [];
    let dataDir = '';
    let distinct = 0;
    if (needsData) {
      const withStackd = needs('import', 'restart', 'query', 'memory');
      const res = await importReps(o, { file, cuts, triples, mixPath }, tmp, withStackd, needs('query', 'peer') && mixPath !== null, log);
      ({ reps: importRepsDone, dataDir } = res);
      rawChild = res.child;
      // The generator may emit a statement twice (a product drawing the same feature twice): stores hold it once.
      distinct = importRepsDone[0]!.raw.size;
      print(`distinct triples (raw store size): ${fmt(distinct)}`);
      figures.raw = importRepsDone.map((r) => r.raw);
      if (withStackd) figures.import = importRepsDone.map((r) => r.stackd);
    }
    const rawReps = importRepsDone.map((r) => r.raw);

    let rs1: RestartFigures[] = [];
    let rs2: RestartFigures | null = null;
    let mixes: MixRounds | null = null;
    if (needs('restart', 'memory', 'query')) {
      rs1 = await restartReps(o.repeat, dataDir, distinct, log);
      log('stackd: restart with 2 query workers');
      // restart() returns only after the server's "ready" log (every replica built), so the
      // query rounds below never race a replica still loading.
      const r2 = await restart(dataDir, ['--query-workers', '2']);
      rs2 = r2.r;
      try {
        if (needs('query') && rawChild && mixPath) mixes = await mixRounds(o.repeat, rawChild, mixPath, r2.s, log);
      } finally {
        await r2.s.stop();
      }
      figures.restart = { workers1: rs1, workers2: rs2 };
    }
    // Without the query part (peer only) the raw rounds still give the peer its baseline.
    if (!mixes && rawChild && mixPath) mixes = await mixRounds(o.repeat, rawChild, mixPath, null, log);
    if (mixes) figures.query = mixes;
    // Free the raw store's memory before the commit and peer parts.
    await rawChild?.exit();
    rawChild = null;

    let commit: CommitRep[] | null = null;
    if (needs('commit')) {
      commit = await commitReps(o.repeat, o.commits, join(tmp, 'commit-data'), log);
      figures.commit = { concurrency: COMMIT_CONCURRENCY, reps: commit };
    }

    const peers: PeerFigures[] = [];
    if (needs('peer')) {
      for (const name of o.peers) {
        log(`peer ${name}: ${PEERS[name].label}`);
        // A peer that fails is reported as failed; the other peers still run.
        peers.push(await runPeer(name, tmp, file, cuts, triples, distinct, mixPath, o.peerTimeLimitS, log).catch((e: Error): PeerFigures => {
          log(`  ${name} failed: ${e.message}`);
          return {
            name, label: PEERS[name].label, importMs: NaN, triplesPerSec: NaN, size: NaN, cpuMs: NaN, rssMiB: NaN, diskMiB: null, countMs: null,
            mixQueries: 0, mix: null, mixError: null, error: e.message,
          };
        }));
      }
      figures.peers = peers;
    }

    // ------------------------------------------------------------ tables
    const imp = importRepsDone[0]?.stackd ? importRepsDone.map((r) => r.stackd!) : null;
    if (imp || (importRepsDone.length && peers.length)) importTable(print, target, o, triples, importRepsDone, peers, cuts.length - 1);
    if (rs1.length && rs2) restartTable(print, target, o, rawReps, rs1, rs2);
    if (imp && rs1.length && rs2) memoryTable(print, target, o, rawReps[rawReps.length - 1]!, imp, rs1, rs2);
    if (mixes && (mixes.c1.length || peers.length)) queryTable(print, target, rounds, mixes, peers, o.peerTimeLimitS);
    if (commit) commitTable(print, target, commit);
    // stackd against each peer; only where stackd was measured in this run (not with --parts peer alone).
    if (imp) {
      const impTps = medianOf(imp, (s) => s.triplesPerSec);
      for (const p of peersOk(peers)) {
        target(`import: stackd (median) vs peer (${p.name})`, ratio(impTps, p.triplesPerSec), '≥ 10×', ratio(impTps, p.triplesPerSec) >= 10);
        if (p.mix && mixes?.c1.length) {
          const c1Qps = median(mixes.c1.map(qps));
          target(`query mix c=1: stackd (median) vs peer (${p.name})`, ratio(c1Qps, qps(p.mix)), '≥ 10×', ratio(c1Qps, qps(p.mix)) >= 10);
        }
      }
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
      print(`## Targets (this run; medians of ${o.repeat} repetition(s), ratios as in the tables above)`);
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
    await rawChild?.exit();
    if (o.keep) log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
