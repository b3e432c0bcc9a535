/**
 * Import benchmark: raw in-process Oxigraph vs a real stackd server, on the same
 * generated N-Triples file, in one run.
 *
 *   npm run bench:import                         # 1M triples
 *   npm run bench:import -- --triples 100000
 *
 * Options:
 *   --triples N            statements to generate (default 1000000)
 *   --chunk-lines N        lines per Store.load() call in the raw baseline (default 2000)
 *   --request-mib N        largest import request body in MiB (default 63; the server's limit is 64)
 *   --query-workers N      head replicas of the server (default: the server's default)
 *   --server-node-args S   extra node flags for the server process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 *   --runs N               repeat (a)-(c) N times on the same file and report medians (default 1)
 *   --skip-raw             do not run the raw baseline
 *   --json FILE            also write the figures as JSON
 *   --keep                 keep the temp directory (data file and data dir)
 *   --records N, --batch N options of bench/import-jobs.ts (run after this one by
 *                          `npm run bench:import`), ignored here
 *
 * Measures (a) raw Oxigraph: a fresh Store in a child process, loaded from the file as a
 * stream with many no_transaction load() calls of --chunk-lines lines each; (b) stackd:
 * the file POSTed to /v1/graph/import/rdf in requests split at line boundaries, from the
 * first byte sent to the last ack, then a SPARQL COUNT; (c) restart: stop, start on the
 * same data dir, time from spawn to the first COUNT answered. No timing is asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { rng } from './bsbm/generate.js';

const BIN = fileURLToPath(new URL('../../bin/stackd', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const MIB = 1024 * 1024;

// ---------------------------------------------------------------- arguments

interface Options {
  triples: number;
  chunkLines: number;
  requestBytes: number;
  queryWorkers: number | null;
  serverNodeArgs: string[];
  skipRaw: boolean;
  runs: number;
  json: string | null;
  keep: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    triples: 1_000_000,
    chunkLines: 2000,
    requestBytes: 63 * MIB,
    queryWorkers: null,
    serverNodeArgs: [],
    skipRaw: false,
    runs: 1,
    json: null,
    keep: false,
  };
  const num = (name: string, v: string | undefined) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} needs a positive number, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case '--triples': o.triples = Math.floor(num(a, argv[++i])); break;
      case '--chunk-lines': o.chunkLines = Math.floor(num(a, argv[++i])); break;
      case '--request-mib': o.requestBytes = Math.floor(num(a, argv[++i]) * MIB); break;
      case '--query-workers': o.queryWorkers = Math.floor(num(a, argv[++i])); break;
      case '--server-node-args': o.serverNodeArgs = (argv[++i] ?? '').split(/\s+/).filter(Boolean); break;
      case '--skip-raw': o.skipRaw = true; break;
      case '--runs': o.runs = Math.floor(num(a, argv[++i])); break;
      case '--json': o.json = argv[++i] ?? null; break;
      case '--keep': o.keep = true; break;
      // `npm run bench:import` passes its arguments to bench/import-jobs.ts too: skip its options.
      case '--records': case '--batch': i++; break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  if (o.requestBytes > 64 * MIB) throw new Error('--request-mib must be at most 64 (the server refuses larger bodies)');
  return o;
}

// ---------------------------------------------------------------- data generation


const EX = 'http://example.org/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const RDF_TYPE = '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>';
const RDFS_LABEL = '<http://www.w3.org/2000/01/rdf-schema#label>';
const LANGS = ['en', 'en', 'en', 'de', 'fr', 'es', 'it', 'ja', 'en-gb', 'pt-br'];
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sta', 'ber', 'gen', 'tor', 'vel', 'qui', 'dra', 'fen', 'ho', 'lix', 'mon'];
const UNICODE_WORDS = ['café', 'Müller', 'naïve', 'Zürich', '東京', 'São', 'Ærø', 'Łódź'];

export interface GeneratedFile {
  path: string;
  triples: number;
  bytes: number;
  subjects: number;
  predicates: number;
  blankNodeTriples: number;
  escapedLiterals: number;
  /** Byte offsets where import requests start and end (line boundaries). */
  cuts: number[];
}

/**
 * Streams `n` distinct triples to `path`: n/5 subjects (5 statements each, grouped by
 * subject as dumps usually are), 50 predicates (rdf:type, rdfs:label and 48 others),
 * objects that are entity or class IRIs, language-tagged, typed and plain literals;
 * 1 subject in 40 is a blank node (and so are references to it); 1 plain literal in 50
 * has an escape (those lines take the parser's slow path).
 */
async function generate(path: string, n: number, requestBytes: number): Promise<GeneratedFile> {
  const rand = rng(20260723);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)]!;
  const words: string[] = [];
  for (let i = 0; i < 400; i++) {
    const k = 2 + Math.floor(rand() * 3);
    let w = '';
    for (let j = 0; j < k; j++) w += pick(SYLLABLES);
    words.push(w);
  }
  words.push(...UNICODE_WORDS);
  const phrase = (max: number) => {
    const k = 1 + Math.floor(rand() * max);
    const out: string[] = [];
    for (let j = 0; j < k; j++) out.push(pick(words));
    return out.join(' ');
  };
  const subjects = Math.max(1, Math.ceil(n / 5));
  const isBlank = (s: number) => s % 40 === 7;
  const node = (s: number) => (isBlank(s) ? `_:b${s}` : `<${EX}resource/R${s}>`);
  const predicates = new Set<number>();

  const out = createWriteStream(path, { highWaterMark: 4 * MIB });
  let bytes = 0;
  let requestStart = 0;
  const cuts = [0];
  let blankNodeTriples = 0;
  let escapedLiterals = 0;
  let buf: string[] = [];
  const flush = async () => {
    if (buf.length === 0) return;
    const ok = out.write(buf.join(''));
    buf = [];
    if (!ok) await once(out, 'drain');
  };
  for (let i = 0; i < n; i++) {
    const s = Math.floor(i / 5);
    const k = i % 5; // distinct predicate group per statement of a subject: triples are distinct
    const pi = k * 10 + Math.floor(rand() * 10);
    predicates.add(pi);
    let p: string;
    let o: string;
    if (pi === 0) {
      p = RDF_TYPE;
      o = `<${EX}class/C${Math.floor(rand() * 100)}>`;
    } else if (pi === 10) {
      p = RDFS_LABEL;
      o = `"${phrase(3)}"@${pick(LANGS)}`;
    } else {
      p = `<${EX}ontology/p${pi}>`;
      const r = rand();
      if (r < 0.35) o = node(Math.floor(rand() * subjects));
      else if (r < 0.4) o = `<${EX}class/C${Math.floor(rand() * 100)}>`;
      else if (r < 0.65) o = `"${phrase(6)}"@${pick(LANGS)}`;
      else if (r < 0.72) o = `"${Math.floor(rand() * 1e6) - 5e5}"^^<${XSD}integer>`;
      else if (r < 0.77) o = `"${(rand() * 1e4).toFixed(2)}"^^<${XSD}decimal>`;
      else if (r < 0.82) {
        const y = 1950 + Math.floor(rand() * 75);
        const m = String(1 + Math.floor(rand() * 12)).padStart(2, '0');
        const d = String(1 + Math.floor(rand() * 28)).padStart(2, '0');
        o = rand() < 0.5 ? `"${y}-${m}-${d}"^^<${XSD}date>` : `"${y}-${m}-${d}T12:${m}:${d}Z"^^<${XSD}dateTime>`;
      } else if (r < 0.85) o = `"${rand() < 0.5}"^^<${XSD}boolean>`;
      else if (rand() < 0.02) {
        escapedLiterals++;
        o = `"${phrase(4)} \\"quoted\\"\\n${phrase(2)}"`;
      } else o = `"${phrase(8)}"`;
    }
    const subj = node(s);
    if (subj.charCodeAt(0) === 95 || o.charCodeAt(0) === 95) blankNodeTriples++;
    const line = `${subj} ${p} ${o} .\n`;
    const len = Buffer.byteLength(line);
    if (bytes + len - requestStart > requestBytes) {
      cuts.push(bytes);
      requestStart = bytes;
    }
    bytes += len;
    buf.push(line);
    if (buf.length >= 10_000) await flush();
  }
  await flush();
  out.end();
  await once(out, 'finish');
  cuts.push(bytes);
  return { path, triples: n, bytes, subjects, predicates: predicates.size, blankNodeTriples, escapedLiterals, cuts };
}

// ---------------------------------------------------------------- memory

interface Mem {
  rssMiB: number;
  hwmMiB: number;
}

function procMem(pid: number | 'self'): Mem | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** The process and all its descendants (a process tree's total). */
function treeMem(root: number): Mem & { processes: number } {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(d));
      children.set(ppid, list);
    } catch {
      /* gone */
    }
  }
  const total = { rssMiB: 0, hwmMiB: 0, processes: 0 };
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const m = procMem(pid);
    if (m) {
      total.rssMiB += m.rssMiB;
      total.hwmMiB += m.hwmMiB;
      total.processes++;
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

// ---------------------------------------------------------------- (a) raw Oxigraph, in a child process

interface RawResult {
  triples: number;
  size: number;
  loadMs: number;
  loads: number;
  cpuMs: number;
  rssMiB: number;
  hwmMiB: number;
}

/** Child-process side: stream the file into a fresh Store, chunkLines lines per load(). */
async function rawChild(file: string, chunkLines: number) {
  const { Store } = await import('oxigraph');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const store = new Store();
  const input = createReadStream(file, { highWaterMark: MIB, encoding: 'utf8' });
  let rest = '';
  let loads = 0;
  let lines = 0;
  for await (const piece of input as AsyncIterable<string>) {
    const text = rest + piece;
    let start = 0;
    let pos = start;
    let count = 0;
    for (;;) {
      const nl = text.indexOf('\n', pos);
      if (nl === -1) break;
      pos = nl + 1;
      if (++count === chunkLines) {
        store.load(text.slice(start, pos), { format: 'application/n-triples', no_transaction: true });
        loads++;
        lines += count;
        start = pos;
        count = 0;
      }
    }
    rest = text.slice(start);
  }
  if (rest.length > 0) {
    store.load(rest, { format: 'application/n-triples', no_transaction: true });
    loads++;
  }
  const loadMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const size = store.size;
  const m = procMem('self')!;
  const result: RawResult = { triples: lines, size, loadMs, loads, cpuMs: (cpu.user + cpu.system) / 1000, rssMiB: m.rssMiB, hwmMiB: m.hwmMiB };
  process.stdout.write(JSON.stringify(result) + '\n');
}

async function runRaw(file: string, chunkLines: number): Promise<RawResult> {
  const child = spawn(process.execPath, [SELF, '--raw-child', file, String(chunkLines)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`raw baseline child exited with ${code}`);
  return JSON.parse(out.trim().split('\n').pop()!) as RawResult;
}

// ---------------------------------------------------------------- (b, c) the real server

const TOKEN = 'bench-' + Math.random().toString(36).slice(2);

interface Server {
  proc: ChildProcess;
  pid: number;
  port: number;
  logs: string[];
  ready: Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function startServer(dataDir: string, o: Options): Promise<Server> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), STACKD_TOKEN: TOKEN, STACKD_LOG_LEVEL: 'info' };
  const args = [...o.serverNodeArgs, BIN, 'serve', '--port', '0', '--data-dir', dataDir];
  if (o.queryWorkers !== null) args.push('--query-workers', String(o.queryWorkers));
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: proc.stderr! }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let readyResolve!: (v: Record<string, unknown>) => void;
  const ready = new Promise<Record<string, unknown>>((r) => (readyResolve = r));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not listen in time:\n${logs.join('\n')}\n${stderr.join('\n')}`)), 60_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      logs.push(line);
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (msg.msg === 'listening') {
        clearTimeout(timer);
        resolve({ proc, pid: proc.pid!, port: msg.port as number, logs, ready, exited });
      }
      if (msg.msg === 'ready') readyResolve(msg);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code}:\n${logs.join('\n')}\n${stderr.join('\n')}`));
    });
  });
}

async function stopServer(s: Server) {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return;
  s.proc.kill('SIGTERM');
  const timer = setTimeout(() => s.proc.kill('SIGKILL'), 60_000);
  await s.exited;
  clearTimeout(timer);
}

const agent = new http.Agent({ keepAlive: true });

function request(port: number, method: string, path: string, headers: Record<string, string | number>, body?: NodeJS.ReadableStream): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers: { authorization: `Bearer ${TOKEN}`, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

async function countTriples(port: number): Promise<{ status: number; count: number | null; text: string }> {
  const q = encodeURIComponent('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
  const r = await request(port, 'GET', `/sparql?query=${q}`, { accept: 'application/sparql-results+json' });
  if (r.status !== 200) return { status: r.status, count: null, text: r.text };
  const j = JSON.parse(r.text) as { results: { bindings: { n: { value: string } }[] } };
  return { status: 200, count: Number(j.results.bindings[0]!.n.value), text: '' };
}

/** Waits for the first COUNT the server answers (queries sent while it loads are held or answered 503). */
async function firstCount(port: number): Promise<number> {
  for (;;) {
    const r = await countTriples(port).catch((e: Error) => ({ status: 0, count: null, text: e.message }));
    if (r.status === 200) return r.count!;
    if (r.status !== 503 && r.status !== 0) throw new Error(`COUNT failed: ${r.status} ${r.text}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

interface ImportResult {
  requests: number;
  ms: number;
  /** Server CPU time (all threads) from the first byte sent to the last ack. */
  cpuMs: number;
  imported: number;
  count: number;
  rss: Mem & { processes: number; pidRssMiB: number };
  dataDirMiB: number;
}

async function importAll(s: Server, gen: GeneratedFile): Promise<ImportResult> {
  await s.ready;
  let imported = 0;
  const cpu0 = procCpuMs(s.pid);
  const t0 = performance.now();
  for (let i = 0; i + 1 < gen.cuts.length; i++) {
    const start = gen.cuts[i]!;
    const end = gen.cuts[i + 1]!;
    const body = createReadStream(gen.path, { start, end: end - 1, highWaterMark: MIB });
    const r = await request(s.port, 'POST', '/v1/graph/import/rdf', { 'content-type': 'application/n-triples', 'content-length': end - start }, body);
    if (r.status !== 200) throw new Error(`import request ${i + 1} failed: ${r.status} ${r.text.slice(0, 500)}`);
    imported += (JSON.parse(r.text) as { imported_triplets: number }).imported_triplets;
  }
  const ms = performance.now() - t0;
  const cpuMs = procCpuMs(s.pid) - cpu0;
  const count = await firstCount(s.port);
  const tree = treeMem(s.pid);
  const own = procMem(s.pid)!;
  return { requests: gen.cuts.length - 1, ms, cpuMs, imported, count, rss: { ...tree, pidRssMiB: own.rssMiB }, dataDirMiB: dirMiB(s) };
}

function dirMiB(s: Server): number {
  const dataDir = s.proc.spawnargs[s.proc.spawnargs.indexOf('--data-dir') + 1]!;
  let total = 0;
  for (const f of readdirSync(dataDir)) total += statSync(join(dataDir, f)).size;
  return total / MIB;
}

interface RestartResult {
  ms: number;
  listeningMs: number;
  buildMs: number | null;
  /** Server CPU time (all threads) from spawn to the first COUNT answered. */
  cpuMs: number;
  count: number;
  rss: Mem & { processes: number };
}

async function restart(dataDir: string, o: Options): Promise<{ s: Server; r: RestartResult }> {
  const t0 = performance.now();
  const s = await startServer(dataDir, o);
  const listeningMs = performance.now() - t0;
  const count = await firstCount(s.port);
  const ms = performance.now() - t0;
  const cpuMs = procCpuMs(s.pid);
  const built = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((m) => m.msg === 'head replica ready');
  return { s, r: { ms, listeningMs, buildMs: (built?.build_ms as number | undefined) ?? null, cpuMs, count, rss: treeMem(s.pid) } };
}

// ---------------------------------------------------------------- report

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '-');

interface RunResult {
  raw: RawResult | null;
  imp: ImportResult;
  rs: RestartResult;
  rawTps: number;
  stackdTps: number;
  ratio: number;
  restartRatio: number;
}

function median(xs: number[]): number {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

async function oneRun(o: Options, gen: GeneratedFile, dataDir: string, log: (m: string) => void): Promise<RunResult> {
  let raw: RawResult | null = null;
  if (!o.skipRaw) {
    log('(a) raw Oxigraph baseline (child process)');
    raw = await runRaw(gen.path, o.chunkLines);
    log(`raw: ${fmt(raw.size)} triples in ${fmt(raw.loadMs)} ms (cpu ${fmt(raw.cpuMs)} ms)`);
    if (raw.size !== gen.triples) throw new Error(`raw store holds ${raw.size} triples, expected ${gen.triples}`);
  }
  let server: Server | null = null;
  try {
    log('(b) stackd import');
    server = await startServer(dataDir, o);
    const imp = await importAll(server, gen);
    log(`stackd: ${fmt(imp.imported)} imported in ${fmt(imp.ms)} ms (server cpu ${fmt(imp.cpuMs)} ms); COUNT = ${fmt(imp.count)}`);
    if (imp.imported !== gen.triples || imp.count !== gen.triples) {
      throw new Error(`after import: imported ${imp.imported}, COUNT ${imp.count}; expected ${gen.triples}`);
    }
    log('(c) restart');
    await stopServer(server);
    server = null;
    const { s, r: rs } = await restart(dataDir, o);
    server = s;
    log(`restart: first COUNT (${fmt(rs.count)}) after ${fmt(rs.ms)} ms (server cpu ${fmt(rs.cpuMs)} ms)`);
    if (rs.count !== gen.triples) throw new Error(`COUNT after restart is ${rs.count}, expected ${gen.triples}`);
    const rawTps = raw ? (raw.size / raw.loadMs) * 1000 : NaN;
    const stackdTps = (imp.count / imp.ms) * 1000;
    return { raw, imp, rs, rawTps, stackdTps, ratio: stackdTps / rawTps, restartRatio: raw ? rs.ms / raw.loadMs : NaN };
  } finally {
    if (server) await stopServer(server).catch(() => undefined);
    if (!o.keep) rmSync(dataDir, { recursive: true, force: true });
  }
}

function report(o: Options, gen: GeneratedFile, runs: RunResult[], load: [string, string]): string {
  const med = (f: (r: RunResult) => number | undefined) => median(runs.map((r) => f(r) ?? NaN));
  const range = (f: (r: RunResult) => number | undefined, d = 0) => {
    if (runs.length < 2) return '';
    const v = runs.map((r) => f(r) ?? NaN).filter(Number.isFinite);
    return v.length ? ` [${fmt(Math.min(...v), d)}–${fmt(Math.max(...v), d)}]` : '';
  };
  const hasRaw = !o.skipRaw;
  const ratio = med((r) => r.ratio);
  const restartRatio = med((r) => r.restartRatio);
  const rows: [string, string, string][] = [
    ['triples', fmt(gen.triples), `${fmt(gen.bytes / MIB, 1)} MiB N-Triples, ${fmt(gen.subjects)} subjects, ${gen.predicates} predicates, ${fmt(gen.blankNodeTriples)} with blank nodes`],
    ['raw Oxigraph load', hasRaw ? `${fmt(med((r) => r.raw?.loadMs))} ms` : 'skipped', hasRaw ? `${fmt(med((r) => r.rawTps))} triples/s${range((r) => r.rawTps)} (${Math.ceil(gen.triples / o.chunkLines)} load() calls of ${o.chunkLines} lines)` : ''],
    ['stackd import', `${fmt(med((r) => r.imp.ms))} ms`, `${fmt(med((r) => r.stackdTps))} triples/s${range((r) => r.stackdTps)} (${gen.cuts.length - 1} request(s) ≤ ${fmt(o.requestBytes / MIB)} MiB, first byte → last ack)`],
    ['import ratio stackd/raw', hasRaw ? fmt(ratio, 2) : '-', `${range((r) => r.ratio, 2).trim()} target ≥ 0.70 → ${hasRaw ? (ratio >= 0.7 ? 'met' : 'NOT met') : '-'}`],
    ['restart to first COUNT', `${fmt(med((r) => r.rs.ms))} ms`, `${range((r) => r.rs.ms).trim()} listening after ${fmt(med((r) => r.rs.listeningMs))} ms; replica build ${fmt(med((r) => r.rs.buildMs ?? NaN))} ms`],
    ['restart / raw load', hasRaw ? fmt(restartRatio, 2) : '-', `${range((r) => r.restartRatio, 2).trim()} target ≤ 1.30 → ${hasRaw ? (restartRatio <= 1.3 ? 'met' : 'NOT met') : '-'}`],
    ['CPU time raw load', hasRaw ? `${fmt(med((r) => r.raw?.cpuMs))} ms` : '-', 'user + system of the raw process during the load'],
    ['CPU time stackd import', `${fmt(med((r) => r.imp.cpuMs))} ms`, hasRaw ? `server, all threads; ${fmt(med((r) => r.imp.cpuMs / (r.raw?.cpuMs ?? NaN)), 2)} × raw` : 'server, all threads'],
    ['CPU time restart', `${fmt(med((r) => r.rs.cpuMs))} ms`, 'server, all threads, spawn → first COUNT'],
    ['RSS raw process', hasRaw ? `${fmt(med((r) => r.raw?.rssMiB))} MiB` : '-', hasRaw ? `peak ${fmt(med((r) => r.raw?.hwmMiB))} MiB` : ''],
    ['RSS server after import', `${fmt(med((r) => r.imp.rss.pidRssMiB))} MiB`, `process tree total ${fmt(med((r) => r.imp.rss.rssMiB))} MiB (${runs[0]!.imp.rss.processes} process(es)), peak ${fmt(med((r) => r.imp.rss.hwmMiB))} MiB`],
    ['RSS server after restart', `${fmt(med((r) => r.rs.rss.rssMiB))} MiB`, `peak ${fmt(med((r) => r.rs.rss.hwmMiB))} MiB`],
    ['data dir after import', `${fmt(med((r) => r.imp.dataDirMiB))} MiB`, 'SQLite file + WAL'],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  const lines = [`| ${'measure'.padEnd(w0)} | ${'value'.padEnd(w1)} | notes |`, `|${'-'.repeat(w0 + 2)}|${'-'.repeat(w1 + 2)}|-------|`];
  for (const r of rows) lines.push(`| ${r[0].padEnd(w0)} | ${r[1].padStart(w1)} | ${r[2]} |`);
  return (
    `\nstackd import benchmark — ${fmt(gen.triples)} triples — ${runs.length > 1 ? `median of ${runs.length} runs [min–max]` : '1 run'}\n` +
    `node ${process.version}, ${cpus().length} CPU(s) ${cpus()[0]?.model ?? ''}, ${fmt(totalmem() / 1024 ** 3, 1)} GiB RAM; load average at start ${load[0]}, at end ${load[1]}\n\n` +
    lines.join('\n') +
    '\n'
  );
}

const loadAvg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'stackd-bench-'));
  const file = join(dir, 'data.nt');
  const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
  try {
    const load0 = loadAvg();
    log(`generating ${fmt(o.triples)} triples into ${file}`);
    const t = performance.now();
    const gen = await generate(file, o.triples, o.requestBytes);
    log(`generated ${fmt(gen.bytes / MIB, 1)} MiB in ${fmt(performance.now() - t)} ms; ${gen.cuts.length - 1} request(s)`);
    const runs: RunResult[] = [];
    for (let i = 0; i < o.runs; i++) {
      if (o.runs > 1) log(`run ${i + 1} of ${o.runs}`);
      const keepDir = o.keep && i === o.runs - 1;
      const dataDir = join(dir, keepDir ? 'data' : `data-${i}`);
      runs.push(await oneRun({ ...o, keep: keepDir }, gen, dataDir, log));
    }
    process.stdout.write(report(o, gen, runs, [load0, loadAvg()]));
    if (o.json) {
      writeFileSync(o.json, JSON.stringify({ options: o, generated: { ...gen, cuts: gen.cuts.length - 1 }, runs }, null, 2) + '\n');
    }
  } finally {
    agent.destroy();
    if (o.keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--raw-child') {
  await rawChild(process.argv[3]!, Number(process.argv[4]));
} else {
  await main();
}
