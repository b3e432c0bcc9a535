/**
 * Test harness: starts the real server (bin/stackd serve) as a child process on an
 * ephemeral port with a temporary data directory, and talks HTTP to it like a client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const BIN = fileURLToPath(new URL('../../../bin/stackd', import.meta.url));
export const TOKEN = 'test-token-' + Math.random().toString(36).slice(2);

export interface StartOptions {
  dataDir?: string;
  token?: string | null;
  env?: Record<string, string>;
  args?: string[];
  /** Resolve once "listening" is logged, without waiting for "ready". */
  untilListening?: boolean;
}

export interface Stackd {
  url: string;
  port: number;
  dataDir: string;
  token: string | null;
  proc: ChildProcess;
  logs: string[];
  stderr: string[];
  /** fetch with the bearer token (unless headers.authorization is given). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Graceful stop (SIGTERM) and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit: what a crash looks like. */
  kill(): Promise<void>;
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'stackd-test-'));
}

export function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
}

export async function startStackd(opts: StartOptions = {}): Promise<Stackd> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const token = opts.token === undefined ? TOKEN : opts.token;
  const env: Record<string, string> = { ...(process.env as Record<string, string>), STACKD_LOG_LEVEL: 'info', ...opts.env };
  delete env.STACKD_TOKEN;
  if (token) env.STACKD_TOKEN = token;
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...(opts.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: proc.stderr! }).on('line', (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  const port = await new Promise<number>((resolve, reject) => {
    let listeningPort = 0;
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${logs.join('\n')}\n${stderr.join('\n')}`)), 60_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      logs.push(line);
      let msg: { msg?: string; port?: number };
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      if (msg.msg === 'listening') {
        listeningPort = msg.port!;
        if (opts.untilListening) {
          clearTimeout(timer);
          resolve(listeningPort);
        }
      }
      if (msg.msg === 'ready') {
        clearTimeout(timer);
        resolve(listeningPort);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code} before it was ready:\n${logs.join('\n')}\n${stderr.join('\n')}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const waitExit = async () => {
    if (proc.exitCode === null && proc.signalCode === null) await exited;
  };
  return {
    url,
    port,
    dataDir,
    token,
    proc,
    logs,
    stderr,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (token && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
      return fetch(url + path, { ...init, headers });
    },
    async stop() {
      proc.kill('SIGTERM');
      await waitExit();
    },
    async kill() {
      proc.kill('SIGKILL');
      await waitExit();
    },
  };
}

/** A SPARQL SELECT over /sparql, returning the JSON bindings. */
export async function selectRows(s: Stackd, query: string): Promise<Record<string, { type: string; value: string }>[]> {
  const res = await s.fetch('/sparql?query=' + encodeURIComponent(query), { headers: { accept: 'application/sparql-results+json' } });
  if (res.status !== 200) throw new Error(`query failed ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { results: { bindings: Record<string, { type: string; value: string }>[] } }).results.bindings;
}

export async function importRdf(s: Stackd, body: string, query = '', contentType = 'application/n-triples'): Promise<Response> {
  return s.fetch('/v1/graph/import/rdf' + (query ? '?' + query : ''), { method: 'POST', headers: { 'content-type': contentType }, body });
}

export async function countTriples(s: Stackd): Promise<number> {
  const rows = await selectRows(s, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
  return Number(rows[0]!.n!.value);
}
