/** A stackd server process for the suite: spawn timing, log events, HTTP helpers. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { BIN } from './stackd.js';

export interface ServerProcess {
  proc: ChildProcess;
  pid: number;
  port: number;
  url: string;
  token: string;
  dataDir: string;
  /** When spawn() was called (performance.now()). */
  spawnedAt: number;
  /** The server's JSON log lines, parsed. */
  logs: Record<string, unknown>[];
  /** Resolves with the "ready" log line (every head replica built). */
  ready: Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  args?: string[];
  nodeArgs?: string[];
  token?: string;
}

/** Spawns `stackd serve` on an ephemeral port; resolves once it listens (replicas may still be building). */
export function spawnServer(dataDir: string, opts: SpawnOptions = {}): Promise<ServerProcess> {
  const token = opts.token ?? 'bench-token';
  const spawnedAt = performance.now();
  const env: Record<string, string> = { ...(process.env as Record<string, string>), STACKD_TOKEN: token, STACKD_LOG_LEVEL: 'info' };
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...(opts.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  createInterface({ input: proc.stderr! }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let readyResolve!: (v: Record<string, unknown>) => void;
  const ready = new Promise<Record<string, unknown>>((r) => (readyResolve = r));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not listen in time: ${stderr.join('\n')}`)), 120_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(msg);
      if (msg.msg === 'listening') {
        clearTimeout(timer);
        const port = msg.port as number;
        resolve({
          proc, pid: proc.pid!, port, url: `http://127.0.0.1:${port}`, token, dataDir, spawnedAt, logs, ready, exited,
          stop: async () => {
            if (proc.exitCode !== null || proc.signalCode !== null) return;
            proc.kill('SIGTERM');
            const t = setTimeout(() => proc.kill('SIGKILL'), 60_000);
            await exited;
            clearTimeout(t);
          },
        });
      }
      if (msg.msg === 'ready') readyResolve(msg);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code}: ${stderr.join('\n')}`));
    });
  });
}

const agent = new http.Agent({ keepAlive: true });

export function request(
  s: { port: number; token: string },
  method: string,
  path: string,
  headers: Record<string, string | number> = {},
  body?: NodeJS.ReadableStream | string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: s.port, method, path, agent, headers: { authorization: `Bearer ${s.token}`, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (typeof body === 'string') req.end(body);
    else if (body) body.pipe(req);
    else req.end();
  });
}

/** COUNT of all triples over /sparql; null with the status when it is not answered. */
export async function countTriples(s: { port: number; token: string }): Promise<{ status: number; count: number | null; text: string }> {
  const q = encodeURIComponent('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
  const r = await request(s, 'GET', `/sparql?query=${q}`, { accept: 'application/sparql-results+json' });
  if (r.status !== 200) return { status: r.status, count: null, text: r.text };
  const j = JSON.parse(r.text) as { results: { bindings: { n: { value: string } }[] } };
  return { status: 200, count: Number(j.results.bindings[0]!.n.value), text: '' };
}

/** The first COUNT the server answers (while replicas build, queries get a retryable 503). */
/**
 * Waits until /sparql answers `ASK { ?s ?p ?o }` (true): the first query answered. The server
 * answers queries only once a replica holds everything durable, so this is when it is back.
 */
export async function firstAnswer(s: { port: number; token: string }): Promise<void> {
  const q = encodeURIComponent('ASK { ?s ?p ?o }');
  for (;;) {
    const r = await request(s, 'GET', `/sparql?query=${q}`, { accept: 'application/sparql-results+json' })
      .catch((e: Error) => ({ status: 0, text: e.message }));
    if (r.status === 200) {
      if (!(JSON.parse(r.text) as { boolean: boolean }).boolean) throw new Error('the first query found no statements');
      return;
    }
    if (r.status !== 503 && r.status !== 0) throw new Error(`ASK failed: ${r.status} ${r.text}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

export async function firstCount(s: { port: number; token: string }): Promise<number> {
  for (;;) {
    const r = await countTriples(s).catch((e: Error) => ({ status: 0, count: null, text: e.message }));
    if (r.status === 200) return r.count!;
    if (r.status !== 503 && r.status !== 0) throw new Error(`COUNT failed: ${r.status} ${r.text}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

/** POSTs byte ranges [cuts[i], cuts[i+1]) of a file, one request each, one after another. */
export async function postFileInChunks(
  s: { port: number; token: string },
  path: string,
  file: string,
  cuts: number[],
  contentType: string,
): Promise<string[]> {
  const replies: string[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const start = cuts[i]!;
    const end = cuts[i + 1]!;
    const body = createReadStream(file, { start, end: end - 1, highWaterMark: 1 << 20 });
    const r = await request(s, 'POST', path, { 'content-type': contentType, 'content-length': end - start }, body);
    if (r.status !== 200) throw new Error(`POST ${path} request ${i + 1} failed: ${r.status} ${r.text.slice(0, 500)}`);
    replies.push(r.text);
  }
  return replies;
}

/** Runs a node script as a child process and parses the last line it prints as JSON. */
export async function runJsonChild<T>(args: string[], nodeArgs: string[] = []): Promise<T> {
  const child = spawn(process.execPath, [...nodeArgs, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${args[0]} exited with ${code}`);
  return JSON.parse(out.trim().split('\n').pop()!) as T;
}
