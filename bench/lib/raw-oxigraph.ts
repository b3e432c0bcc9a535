/**
 * The in-process baseline: a fresh Oxigraph Store in this (child) process, loaded from an
 * N-Triples file as a stream of no_transaction load() calls of --chunk-lines lines (the
 * best raw load in ENGINE-NOTES.md), then, given --mix, the query mix run one query after
 * another with store.query(text, { results_format }) — the same engine call and the same
 * serialised bytes the server answers with, without HTTP. Prints one JSON line.
 *
 *   node dist/bench/lib/raw-oxigraph.js --file data.nt [--chunk-lines 2000] [--mix mix.json]
 */
import { createReadStream } from 'node:fs';
import { Parser } from 'n3';
import { procMem } from './proc.js';
import { readMix, resultSize, type MixRun } from './mix.js';

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

async function main() {
  const file = arg('file');
  if (!file) throw new Error('--file is required');
  const chunkLines = Number(arg('chunk-lines') ?? 2000);
  const mixPath = arg('mix');
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
  if (mixPath) {
    const mix = readMix(mixPath);
    const run = (text: string, accept: string) => store.query(text, { results_format: FORMATS[accept] ?? accept }) as string;
    const sizes = mix.warmup.map((q) => {
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
    result.mix = { totalMs, queries: mix.queries.length, errors: 0, firstError: null, latencies, sizes, cpuMs: (c.user + c.system) / 1000 };
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
