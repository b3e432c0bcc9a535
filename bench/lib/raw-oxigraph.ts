/**
 * The in-process baseline: a fresh Oxigraph Store in this (child) process, loaded from an
 * N-Triples file as a stream of no_transaction load() calls of --chunk-lines lines (the
 * best raw load in ENGINE-NOTES.md), then, given --mix, the query mix run one query after
 * another with store.query(text, { results_format }) — the same engine call and the same
 * serialised bytes the server answers with, without HTTP. Prints one JSON line (a RawResult).
 *
 * With --stay (needs --mix) the load's JSON line has mix: null and the process then stays,
 * holding the store, and reads commands from stdin, one per line, so the suite can interleave
 * raw rounds with stackd rounds on a noisy machine instead of comparing one run with one run:
 *   mix   run the timed mix once and print one MixRun JSON line (the untimed warm-up round
 *         runs once, before the first timed run; its result sizes are in every MixRun)
 *   exit  exit (so does end of input)
 *
 *   node dist/bench/lib/raw-oxigraph.js --file data.nt [--chunk-lines 2000] [--mix mix.json] [--stay]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Parser } from 'n3';
import type { Store as OxStore } from 'oxigraph';
import { procMem } from './proc.js';
import { readMix, resultSize, type MixFile, type MixRun } from './mix.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? null : null;
};

export interface RawResult {
  triples: number;
  size: number;
  loadMs: number;
  loads: number;
  cpuMs: number;
  /** RSS of this process with oxigraph imported and an empty store. */
  baseRssMiB: number;
  rssMiB: number;
  hwmMiB: number;
  /** The one-shot mix run (without --stay); null with --stay, whose rounds come over stdin. */
  mix: MixRun | null;
}

const FORMATS: Record<string, string> = {
  'application/sparql-results+json': 'application/sparql-results+json',
  'text/turtle': 'text/turtle',
};

/** Counts triples in a Turtle body (only for the size check, outside any timed region). */
export function countTurtle(body: string): number {
  return new Parser({ format: 'text/turtle' }).parse(body).length;
}

/** Loads the file into a fresh store; the figures are those of the load alone. */
async function load(file: string, chunkLines: number): Promise<{ store: OxStore; result: RawResult }> {
  const { Store } = await import('oxigraph');
  const store = new Store();
  const baseRssMiB = procMem('self')!.rssMiB;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const input = createReadStream(file, { highWaterMark: 1 << 20, encoding: 'utf8' });
  let rest = '';
  let loads = 0;
  let lines = 0;
  for await (const piece of input as AsyncIterable<string>) {
    const text = rest + piece;
    let start = 0;
    let pos = 0;
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
    lines += count;
    rest = text.slice(start);
  }
  if (rest.length > 0) {
    store.load(rest, { format: 'application/n-triples', no_transaction: true });
    loads++;
  }
  const loadMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const m = procMem('self')!;
  const result: RawResult = {
    triples: lines, size: store.size, loadMs, loads, cpuMs: (cpu.user + cpu.system) / 1000,
    baseRssMiB, rssMiB: m.rssMiB, hwmMiB: m.hwmMiB, mix: null,
  };
  return { store, result };
}

/** A function that runs the timed mix once; the warm-up round runs on its first call only. */
function mixRunner(store: OxStore, mix: MixFile): () => MixRun {
  const run = (text: string, accept: string) => store.query(text, { results_format: FORMATS[accept] ?? accept }) as string;
  let sizes: number[] | null = null;
  return () => {
    sizes ??= mix.warmup.map((q) => {
      const body = run(q.text, q.accept);
      return q.accept.includes('json') ? resultSize(q.accept, body) : countTurtle(body);
    });
    const latencies: number[] = [];
    const c0 = process.cpuUsage();
    const start = performance.now();
    for (const q of mix.queries) {
      const a = performance.now();
      run(q.text, q.accept);
      latencies.push(performance.now() - a);
    }
    const totalMs = performance.now() - start;
    const c = process.cpuUsage(c0);
    return { totalMs, queries: mix.queries.length, errors: 0, firstError: null, latencies, sizes, cpuMs: (c.user + c.system) / 1000 };
  };
}

/** --stay: answer stdin commands until `exit` or end of input. */
async function serveCommands(runMix: () => MixRun): Promise<void> {
  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = line.trim();
    if (cmd === 'exit') break;
    if (cmd === 'mix') process.stdout.write(JSON.stringify(runMix()) + '\n');
    else if (cmd) throw new Error(`unknown command ${JSON.stringify(cmd)}`);
  }
}

async function main() {
  const file = arg('file');
  if (!file) throw new Error('--file is required');
  const mixPath = arg('mix');
  const stay = process.argv.includes('--stay');
  if (stay && !mixPath) throw new Error('--stay needs --mix');
  const { store, result } = await load(file, Number(arg('chunk-lines') ?? 2000));
  const runMix = mixPath ? mixRunner(store, readMix(mixPath)) : null;
  if (runMix && !stay) result.mix = runMix();
  // stdout is a pipe: writes to it are synchronous on Linux, so exiting right after is safe.
  process.stdout.write(JSON.stringify(result) + '\n');
  if (runMix && stay) {
    await serveCommands(runMix);
    // The stdin interface may keep the loop alive after `exit`: leave explicitly.
    process.exit(0);
  }
}

/** The parent's handle on a `--stay` child: its load figures, then timed mix rounds on demand. */
export interface RawChild {
  result: RawResult;
  mix(): Promise<MixRun>;
  exit(): Promise<void>;
}

const SELF = fileURLToPath(import.meta.url);

/** Spawns this script with --stay (args as for the CLI, --mix included) and waits for its load line. */
export async function startRawChild(args: string[]): Promise<RawChild> {
  const child = spawn(process.execPath, [SELF, ...args, '--stay'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const nextJson = async <T>(what: string): Promise<T> => {
    const r = await lines.next();
    if (r.done) throw new Error(`raw child exited before ${what} (code ${child.exitCode})`);
    return JSON.parse(r.value) as T;
  };
  try {
    const result = await nextJson<RawResult>('its load result');
    return {
      result,
      mix: () => {
        child.stdin!.write('mix\n');
        return nextJson<MixRun>('a mix result');
      },
      exit: async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.stdin!.end('exit\n');
        // A child stuck in a query would never read `exit`.
        const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(t);
      },
    };
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
