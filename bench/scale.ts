/**
 * Scale ceiling: how many triples one head replica (Oxigraph WASM, 4 GiB linear memory)
 * holds, and what the server does when a write does not fit.
 *
 *   npm run bench:scale                       # to the edge, 1M triples per step
 *   npm run bench:scale -- --step 500000 --max-triples 3000000 --json scale.json
 *
 * Options:
 *   --step N            triples per step (default 1000000): one new, disjoint BSBM part per step
 *   --max-triples N     stop after this many acknowledged triples even without reaching the edge
 *   --request-mib N     largest import request body in MiB (default 63; the server refuses > 64)
 *   --server-args S     extra `stackd serve` flags, e.g. "--max-statements 5000000"
 *   --json FILE         also write every figure as JSON
 *   --keep              keep the temp data directory
 *
 * A real server (`--query-workers 1`, temp data dir) receives BSBM N-Triples (bench/bsbm,
 * `part` k for step k, so every step's instances are new) through POST
 * /v1/graph/import/rdf, in requests of at most --request-mib, one after another, until one
 * is refused or fails. Per step: acknowledged triples (sum of imported_triplets), import time,
 * server VmRSS / VmHWM, and a SPARQL COUNT that must equal the acknowledged total. At the
 * edge: the failing request's status and error body, whether the process is alive, /healthz,
 * whether COUNT (once a replica answers) equals the acknowledged total, whether a small write
 * still succeeds, and after SIGTERM (SIGKILL after 60 s) and a restart on the same data
 * directory, whether the server comes back and COUNT equals the acknowledged total.
 */
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startBenchServer, type BenchServer } from './lib/stackd.js';
import { procMem } from './lib/proc.js';
import { generate, productsForTriples, scaleFor } from './bsbm/generate.js';

const MIB = 1024 * 1024;

interface Options {
  step: number;
  maxTriples: number;
  requestBytes: number;
  serverArgs: string[];
  json: string | null;
  keep: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { step: 1_000_000, maxTriples: Infinity, requestBytes: 63 * MIB, serverArgs: [], json: null, keep: false };
  const num = (name: string, v: string | undefined) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} needs a positive number, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case '--step': o.step = Math.floor(num(a, argv[++i])); break;
      case '--max-triples': o.maxTriples = Math.floor(num(a, argv[++i])); break;
      case '--request-mib': o.requestBytes = Math.floor(num(a, argv[++i]) * MIB); break;
      case '--server-args': o.serverArgs = (argv[++i] ?? '').split(/\s+/).filter(Boolean); break;
      case '--json': o.json = argv[++i] ?? null; break;
      case '--keep': o.keep = true; break;
      default: throw new Error(`unknown option ${a}`);
    }
  }
  if (o.requestBytes > 64 * MIB) throw new Error('--request-mib must be at most 64 (the server refuses larger bodies)');
  return o;
}

// ---------------------------------------------------------------- process figures

const alive = (s: BenchServer) => s.proc.exitCode === null && s.proc.signalCode === null;

function dirMiB(dir: string): number {
  let total = 0;
  for (const f of readdirSync(dir)) {
    const st = statSync(join(dir, f));
    if (st.isFile()) total += st.size;
  }
  return total / MIB;
}

// ---------------------------------------------------------------- HTTP

const agent = new http.Agent({ keepAlive: true });

interface Answer {
  status: number;
  text: string;
  /** Set when no HTTP answer came: connection error or timeout. */
  error?: string;
}

function request(s: BenchServer, method: string, path: string, body?: Buffer, headers: Record<string, string | number> = {}, timeoutMs = 10 * 60_000): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port: s.port, method, path, agent, headers: { authorization: `Bearer ${s.token}`, ...headers } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
        res.on('error', (e) => resolve({ status: 0, text: '', error: e.message }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', (e) => resolve({ status: 0, text: '', error: e.message }));
    if (body) req.end(body);
    else req.end();
  });
}

function importBody(s: BenchServer, body: Buffer): Promise<Answer> {
  return request(s, 'POST', '/v1/graph/import/rdf', body, { 'content-type': 'application/n-triples', 'content-length': body.length });
}

async function count(s: BenchServer): Promise<Answer & { count: number | null }> {
  const q = encodeURIComponent('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
  const r = await request(s, 'GET', `/sparql?query=${q}`, undefined, { accept: 'application/sparql-results+json' }, 10 * 60_000);
  if (r.status !== 200) return { ...r, count: null };
  const j = JSON.parse(r.text) as { results: { bindings: { n: { value: string } }[] } };
  return { ...r, count: Number(j.results.bindings[0]!.n.value) };
}

/** COUNT, retried while the server answers 503 (a replica being rebuilt) for up to `waitMs`. */
async function countWhenReady(s: BenchServer, waitMs: number): Promise<{ count: number | null; status: number; detail: string; waitedMs: number }> {
  const t0 = performance.now();
  for (;;) {
    const r = await count(s);
    const waitedMs = Math.round(performance.now() - t0);
    if (r.status === 200) return { count: r.count, status: 200, detail: '', waitedMs };
    const retry = (r.status === 503 || r.status === 0) && alive(s) && waitedMs < waitMs;
    if (!retry) return { count: null, status: r.status, detail: r.error ?? r.text.slice(0, 500), waitedMs };
    await new Promise((res) => setTimeout(res, 1000));
  }
}

async function healthz(s: BenchServer): Promise<string> {
  const r = await request(s, 'GET', '/healthz', undefined, {}, 10_000);
  return r.status ? `${r.status} ${r.text}` : `no answer (${r.error})`;
}

// ---------------------------------------------------------------- server

interface Running {
  s: BenchServer;
  logs: string[];
}

/** Starts the server; if it is not ready in time it is killed and the error carries its last log lines. */
async function start(dataDir: string, o: Options, timeoutMs: number): Promise<Running> {
  let timer: NodeJS.Timeout | undefined;
  const logs: string[] = [];
  let proc: ChildProcess | null = null;
  const started = startBenchServer(dataDir, ['--query-workers', '1', ...o.serverArgs], undefined, (p) => {
    proc = p;
    createInterface({ input: p.stdout! }).on('line', (l) => logs.push(l));
  });
  try {
    const s = await Promise.race([
      started,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`server not ready after ${timeoutMs / 1000} s`)), timeoutMs))),
    ]);
    return { s, logs };
  } catch (e) {
    const p = proc as ChildProcess | null;
    if (p && p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    throw new Error(`${(e as Error).message}; last log lines:\n${logs.slice(-15).join('\n')}`);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM, then SIGKILL after 60 s; says which ended it. */
async function stop(s: BenchServer): Promise<string> {
  if (!alive(s)) return `already exited (code ${s.proc.exitCode}, signal ${s.proc.signalCode})`;
  const exited = new Promise<void>((r) => s.proc.once('exit', () => r()));
  s.proc.kill('SIGTERM');
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    s.proc.kill('SIGKILL');
  }, 60_000);
  await exited;
  clearTimeout(timer);
  return killed ? 'SIGTERM did not stop it in 60 s; SIGKILL' : `SIGTERM: exited with code ${s.proc.exitCode}`;
}

// ---------------------------------------------------------------- data

/** BSBM part `part` of about `triples` triples, as N-Triples request bodies of at most `maxBytes`, cut at line ends. */
function stepBodies(triples: number, part: number, maxBytes: number): { bodies: Buffer[]; triples: number } {
  const bodies: Buffer[] = [];
  let lines: string[] = [];
  let size = 0;
  let n = 0;
  const flush = () => {
    if (lines.length) bodies.push(Buffer.from(lines.join(''), 'utf8'));
    lines = [];
    size = 0;
  };
  generate(scaleFor(productsForTriples(triples)), {
    triple(s, p, o) {
      const line = `${s} ${p} ${o} .\n`;
      const len = Buffer.byteLength(line);
      if (size + len > maxBytes) flush();
      lines.push(line);
      size += len;
      n++;
    },
    edge() {},
    props() {},
  }, 42, part);
  flush();
  return { bodies, triples: n };
}

// ---------------------------------------------------------------- run

interface Step {
  step: number;
  sentTriples: number;
  requests: number;
  importMs: number;
  ackedTotal: number;
  rssMiB: number;
  hwmMiB: number;
  count: number | null;
  countMs: number;
  dataDirMiB: number;
}

interface Edge {
  reached: boolean;
  /** Acknowledged triples when the edge was reached (the small write after it adds more). */
  ackedBefore: number | null;
  step: number | null;
  request: number | null;
  status: number | null;
  error: unknown;
  requestMs: number | null;
  aliveAfter: boolean;
  healthz: string;
  rssMiB: number | null;
  countAfter: { count: number | null; status: number; detail: string; waitedMs: number } | null;
  countMatches: boolean | null;
  smallWrite: { status: number; body: string } | null;
  logs: string[];
  stop: string;
  restart: { ok: boolean; ms: number; error: string | null; count: number | null; countMatches: boolean | null; rssMiB: number | null; healthz: string | null; logs: string[] };
}

const fmt = (n: number | null | undefined, d = 0) =>
  n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

function interesting(logs: string[]): string[] {
  return logs.filter((l) => {
    try {
      const m = JSON.parse(l) as { level?: number };
      return (m.level ?? 30) >= 40 || /replica|capacity|full|build/i.test(l);
    } catch {
      return true;
    }
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const log = (m: string) => process.stderr.write(`[scale] ${m}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'stackd-scale-'));
  const dataDir = join(dir, 'data');
  const began = new Date().toISOString();
  const steps: Step[] = [];
  let acked = 0;
  const tRun = performance.now();
  let run = await start(dataDir, o, 60_000);
  const edge: Edge = {
    reached: false, ackedBefore: null, step: null, request: null, status: null, error: null, requestMs: null, aliveAfter: true, healthz: '', rssMiB: null,
    countAfter: null, countMatches: null, smallWrite: null, logs: [], stop: '',
    restart: { ok: false, ms: 0, error: null, count: null, countMatches: null, rssMiB: null, healthz: null, logs: [] },
  };
  try {
    for (let k = 0; acked < o.maxTriples && !edge.reached; k++) {
      const { bodies, triples } = stepBodies(o.step, k, o.requestBytes);
      log(`step ${k + 1}: ${fmt(triples)} triples in ${bodies.length} request(s); acknowledged so far ${fmt(acked)}`);
      const t0 = performance.now();
      for (let i = 0; i < bodies.length; i++) {
        const ta = performance.now();
        const r = await importBody(run.s, bodies[i]!);
        if (r.status === 200) {
          acked += (JSON.parse(r.text) as { imported_triplets: number }).imported_triplets;
          continue;
        }
        edge.reached = true;
        edge.ackedBefore = acked;
        edge.step = k + 1;
        edge.request = i + 1;
        edge.status = r.status || null;
        edge.requestMs = Math.round(performance.now() - ta);
        try {
          edge.error = r.error ?? JSON.parse(r.text);
        } catch {
          edge.error = r.text.slice(0, 2000);
        }
        log(`step ${k + 1} request ${i + 1} failed after ${fmt(edge.requestMs)} ms: ${r.status} ${r.error ?? r.text.slice(0, 500)}`);
        break;
      }
      const importMs = performance.now() - t0;
      const mem = procMem(run.s.proc.pid!);
      if (edge.reached) break;
      const tc = performance.now();
      const c = await count(run.s);
      const countMs = performance.now() - tc;
      steps.push({
        step: k + 1, sentTriples: triples, requests: bodies.length, importMs: Math.round(importMs), ackedTotal: acked,
        rssMiB: mem?.rssMiB ?? NaN, hwmMiB: mem?.hwmMiB ?? NaN, count: c.count, countMs: Math.round(countMs), dataDirMiB: dirMiB(dataDir),
      });
      log(`step ${k + 1}: ${fmt(importMs)} ms, acknowledged ${fmt(acked)}, COUNT ${fmt(c.count)} (${fmt(countMs)} ms), RSS ${fmt(mem?.rssMiB)} MiB`);
      if (c.count !== acked) throw new Error(`COUNT ${c.count} (status ${c.status} ${c.text.slice(0, 300)}) differs from the acknowledged ${acked}`);
    }

    if (edge.reached) {
      edge.aliveAfter = alive(run.s);
      edge.rssMiB = procMem(run.s.proc.pid!)?.rssMiB ?? null;
      edge.healthz = edge.aliveAfter ? await healthz(run.s) : 'process exited';
      log(`after the edge: alive ${edge.aliveAfter}, /healthz ${edge.healthz}`);
      if (edge.aliveAfter) {
        // A replica being rebuilt answers 503 meanwhile: wait for it (a rebuild near the ceiling takes minutes).
        edge.countAfter = await countWhenReady(run.s, 15 * 60_000);
        edge.countMatches = edge.countAfter.count === acked;
        log(`COUNT after the edge: ${fmt(edge.countAfter.count)} (acknowledged ${fmt(acked)}), waited ${fmt(edge.countAfter.waitedMs)} ms ${edge.countAfter.detail}`);
        edge.healthz = await healthz(run.s);
        // Does a small new write still succeed?
        const small = Buffer.from(`<http://bsbm.example.org/scale/after-edge> <http://bsbm.example.org/scale/p> "${began}" .\n`);
        const w = await importBody(run.s, small);
        edge.smallWrite = { status: w.status, body: (w.error ?? w.text).slice(0, 1000) };
        if (w.status === 200) acked += (JSON.parse(w.text) as { imported_triplets: number }).imported_triplets;
        log(`small write after the edge: ${w.status} ${(w.error ?? w.text).slice(0, 300)}`);
        edge.healthz = await healthz(run.s);
      }
      edge.logs = interesting(run.logs).slice(-40);
      edge.stop = await stop(run.s);
      log(`stop: ${edge.stop}`);
      const tr = performance.now();
      try {
        run = await start(dataDir, o, 20 * 60_000);
        edge.restart.ms = Math.round(performance.now() - tr);
        edge.restart.ok = true;
        const c = await countWhenReady(run.s, 15 * 60_000);
        edge.restart.count = c.count;
        edge.restart.countMatches = c.count === acked;
        edge.restart.rssMiB = procMem(run.s.proc.pid!)?.rssMiB ?? null;
        edge.restart.healthz = await healthz(run.s);
        log(`restart: ready after ${fmt(edge.restart.ms)} ms, COUNT ${fmt(c.count)} (acknowledged ${fmt(acked)}), RSS ${fmt(edge.restart.rssMiB)} MiB`);
        edge.restart.logs = interesting(run.logs).slice(-20);
      } catch (e) {
        edge.restart.ms = Math.round(performance.now() - tr);
        edge.restart.error = (e as Error).message.slice(0, 2000);
        log(`restart failed: ${edge.restart.error}`);
      }
    }
  } finally {
    if (alive(run.s)) await stop(run.s);
    agent.destroy();
  }

  const totalMs = performance.now() - tRun;
  const rows = steps.map((s) => `| ${s.step} | ${fmt(s.ackedTotal)} | ${fmt(s.importMs / 1000, 1)} | ${fmt((s.sentTriples / s.importMs) * 1000)} | ${fmt(s.rssMiB)} | ${fmt(s.hwmMiB)} | ${fmt(s.count)} | ${fmt(s.countMs / 1000, 1)} | ${fmt(s.dataDirMiB)} |`);
  const out: string[] = [];
  out.push(`\nstackd scale ceiling — step ${fmt(o.step)} triples (BSBM parts), --query-workers 1`);
  out.push(`node ${process.version}, ${cpus().length} CPU(s) ${cpus()[0]?.model ?? ''}, ${fmt(totalmem() / 1024 ** 3, 1)} GiB RAM; ${began}; total ${fmt(totalMs / 1000)} s\n`);
  out.push('| step | acked triples (total) | import s | triples/s | RSS MiB | peak RSS MiB | COUNT | COUNT s | data dir MiB |');
  out.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  out.push(...rows);
  if (edge.reached) {
    out.push('');
    out.push(`edge: step ${edge.step}, request ${edge.request} (after ${fmt(edge.ackedBefore)} acknowledged): HTTP ${edge.status ?? 'none'} after ${fmt(edge.requestMs)} ms`);
    out.push(`  error: ${JSON.stringify(edge.error)}`);
    out.push(`  process alive after it: ${edge.aliveAfter}; RSS ${fmt(edge.rssMiB)} MiB; /healthz: ${edge.healthz}`);
    if (edge.countAfter) out.push(`  COUNT after it: ${fmt(edge.countAfter.count)} (status ${edge.countAfter.status}, waited ${fmt(edge.countAfter.waitedMs)} ms) = acknowledged? ${edge.countMatches}`);
    if (edge.smallWrite) out.push(`  a 1-triple import after it: HTTP ${edge.smallWrite.status} ${edge.smallWrite.body.slice(0, 300)}`);
    out.push(`  stop: ${edge.stop}`);
    out.push(
      edge.restart.ok
        ? `  restart: ready after ${fmt(edge.restart.ms)} ms; COUNT ${fmt(edge.restart.count)} = acknowledged ${fmt(acked)}? ${edge.restart.countMatches}; RSS ${fmt(edge.restart.rssMiB)} MiB; /healthz ${edge.restart.healthz}`
        : `  restart FAILED after ${fmt(edge.restart.ms)} ms: ${edge.restart.error}`,
    );
    out.push('  server log lines (warnings and replica events) around the edge:');
    for (const l of edge.logs) out.push(`    ${l.slice(0, 400)}`);
  } else {
    out.push(`\nno edge reached: stopped at ${fmt(acked)} acknowledged triples (--max-triples)`);
  }
  process.stdout.write(out.join('\n') + '\n');
  if (o.json) writeFileSync(o.json, JSON.stringify({ options: { ...o, maxTriples: Number.isFinite(o.maxTriples) ? o.maxTriples : null }, began, totalMs, acked, steps, edge }, null, 2) + '\n');
  if (o.keep) log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

await main();
