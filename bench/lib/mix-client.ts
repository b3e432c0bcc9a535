/**
 * The external HTTP client of the query-mix benchmark: a separate process that sends the
 * mix to a SPARQL endpoint (SPARQL 1.1 Protocol, query via GET) over keep-alive
 * connections, `--concurrency` requests in flight, each connection taking the next query
 * of the list as soon as its previous answer has been read in full. It first sends one
 * untimed warm-up round and records each answer's result size, then times the rest.
 * Prints one JSON line (a MixRun).
 *
 *   node dist/bench/lib/mix-client.js --endpoint http://127.0.0.1:PORT/sparql --mix mix.json
 *        [--concurrency 4] [--token T] [--time-limit-s 120]
 */
import http from 'node:http';
import { readMix, resultSize, type MixRun } from './mix.js';
import { countTurtle } from './raw-oxigraph.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? null : null;
};

const endpoint = new URL(arg('endpoint') ?? '');
const concurrency = Number(arg('concurrency') ?? 1);
const token = arg('token');
const timeLimitMs = Number(arg('time-limit-s') ?? 0) * 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function send(text: string, accept: string): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { accept };
  if (token) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: endpoint.hostname, port: endpoint.port, path: `${endpoint.pathname}?query=${encodeURIComponent(text)}`, method: 'GET', headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function main() {
  const mix = readMix(arg('mix') ?? '');
  const sizes: number[] = [];
  for (const q of mix.warmup) {
    const r = await send(q.text, q.accept);
    if (r.status !== 200) throw new Error(`warm-up ${q.name}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    sizes.push(q.accept.includes('json') ? resultSize(q.accept, r.body) : countTurtle(r.body));
  }
  const latencies: number[] = new Array(mix.queries.length).fill(NaN);
  let next = 0;
  let errors = 0;
  let firstError: string | null = null;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= mix.queries.length) return;
        if (timeLimitMs > 0 && performance.now() - start > timeLimitMs) return;
        const q = mix.queries[i]!;
        const a = performance.now();
        const r = await send(q.text, q.accept).catch((e: Error) => ({ status: 0, body: e.message }));
        latencies[i] = performance.now() - a;
        if (r.status !== 200) {
          errors++;
          firstError ??= `${q.name}: HTTP ${r.status} ${r.body.slice(0, 300)}`;
        }
      }
    }),
  );
  const totalMs = performance.now() - start;
  const done = latencies.filter(Number.isFinite).length;
  const run: MixRun = { totalMs, queries: done, errors, firstError, latencies, sizes };
  process.stdout.write(JSON.stringify(run) + '\n');
  agent.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
