/**
 * The durable import path: records/s of NDJSON through POST /v1/graph/import-jobs (streamed
 * upload, grouped commits) against the synchronous POST /v1/graph/import on the same data,
 * each into a fresh server.
 *
 *   node dist/bench/import-jobs.js [--records N] [--batch N]
 */
import { mkdtempSync, rmSync, writeFileSync, statSync, readFileSync } from 'node:fs';
import { tmpdir, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { startBenchServer, type BenchServer } from './lib/stackd.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const RECORDS = arg('records', 100_000);
const BATCH = arg('batch', 10_000);
/** The synchronous route takes one body of at most 64 MiB; send it in slices of this many records. */
const SYNC_SLICE = 50_000;

function generate(path: string, n: number) {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(
      i % 10 === 9
        ? JSON.stringify({ type: 'Person', name: `p${i}`, properties: { n: i, title: `title ${i % 97}` } })
        : JSON.stringify({
            source: { type: 'Person', name: `p${i}` },
            relation: i % 3 === 0 ? 'works_at' : 'knows',
            target: i % 3 === 0 ? { type: 'Company', name: `c${i % 1000}` } : { type: 'Person', name: `p${(i * 7919) % n}` },
            confidence: 0.5 + (i % 50) / 100,
            evidence: `record ${i}`,
          }),
    );
  }
  writeFileSync(path, lines.join('\n') + '\n');
}

async function post(s: BenchServer, path: string, body: BodyInit, headers: Record<string, string>) {
  const res = await fetch(s.url + path, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, ...headers }, body, duplex: 'half' } as RequestInit);
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function viaJob(s: BenchServer, file: string): Promise<number> {
  const t0 = performance.now();
  const acc = await post(s, `/v1/graph/import-jobs?batch=${BATCH}`, readFileSync(file), {
    'content-type': 'application/x-ndjson',
    'idempotency-key': `bench-${Date.now()}`,
  });
  for (;;) {
    const res = await fetch(`${s.url}/v1/graph/import-jobs?job_id=${acc.job_id}`, { headers: { authorization: `Bearer ${s.token}` } });
    const st = (await res.json()) as { state: string };
    if (st.state === 'succeeded') break;
    if (st.state === 'failed' || st.state === 'cancelled') throw new Error(`job ${st.state}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return (performance.now() - t0) / 1000;
}

async function viaSync(s: BenchServer, file: string): Promise<number> {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const t0 = performance.now();
  for (let i = 0; i < lines.length; i += SYNC_SLICE) {
    await post(s, `/v1/graph/import?batch=${Math.min(BATCH, 10_000)}`, lines.slice(i, i + SYNC_SLICE).join('\n') + '\n', { 'content-type': 'application/x-ndjson' });
  }
  return (performance.now() - t0) / 1000;
}

async function main() {
  console.log(`# bench:import (durable jobs) — ${new Date().toISOString()} — ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`);
  const dir = mkdtempSync(join(tmpdir(), 'stackd-bench-jobs-'));
  const file = join(dir, 'records.ndjson');
  generate(file, RECORDS);
  const results: [string, number][] = [];
  for (const [name, run] of [['POST /v1/graph/import (synchronous)', viaSync], ['POST /v1/graph/import-jobs (durable job)', viaJob]] as const) {
    const data = mkdtempSync(join(dir, 'data-'));
    const s = await startBenchServer(data);
    try {
      results.push([name, await run(s, file)]);
    } finally {
      await s.stop();
    }
  }
  const base = RECORDS / results[0]![1];
  console.log(`\n${RECORDS} NDJSON records (${(statSync(file).size / 2 ** 20).toFixed(1)} MiB), batch ${BATCH}\n`);
  console.log('| path | seconds | records/s | vs synchronous |');
  console.log('|---|---|---|---|');
  for (const [name, secs] of results) console.log(`| ${name} | ${secs.toFixed(2)} | ${Math.round(RECORDS / secs)} | ${(RECORDS / secs / base).toFixed(2)} |`);
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
