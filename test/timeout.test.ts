/**
 * Runaway queries: cut off at --query-timeout-ms with a typed, retryable error, while
 * the rest of the server keeps serving and the replica is rebuilt from durable state.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStackd, importRdf, selectRows, removeDir, type Stackd } from './helpers/server.js';

const TIMEOUT_MS = 300;
const RUNAWAY = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }';
const TRIPLES = 3000;
/** ≈ 270k joined rows over the loaded data: ~0.1 s, a fraction of a 1 s timeout, but many queue past it. */
const MEDIUM = 'SELECT (COUNT(*) AS ?n) WHERE { ?a <http://e/p1> ?c . ?d <http://e/p2> ?f . ?g <http://e/p3> ?h FILTER(?h IN ("3", "13", "23")) }';

function sparqlGet(s: Stackd, query: string): Promise<Response> {
  return s.fetch('/sparql?query=' + encodeURIComponent(query), { headers: { accept: 'application/sparql-results+json' } });
}

async function load(s: Stackd) {
  const lines: string[] = [];
  for (let i = 0; i < TRIPLES; i++) lines.push(`<http://e/s${i}> <http://e/p${i % 10}> "${i}" .`);
  const res = await importRdf(s, lines.join('\n') + '\n');
  assert.equal(res.status, 200);
  await res.body?.cancel();
  // Warm every replica up (a cold worker's first query is slower on a busy machine).
  for (let i = 0; i < 2; i++) {
    const counts = await Promise.all([eventually(s, COUNT_ALL), eventually(s, COUNT_ALL)]);
    for (const rows of counts) assert.equal(Number(rows[0]!.n!.value), TRIPLES);
  }
}

const COUNT_ALL = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
const total = async (s: Stackd) => Number((await eventually(s, COUNT_ALL))[0]!.n!.value);

interface ErrorEnvelope {
  error: { type: string; code: string; message: string; retryable: boolean; retry_after_seconds?: number; request_id: string };
}

/** Sends the runaway query and checks the typed timeout answer; returns how long it took. */
async function expectTimeout(s: Stackd): Promise<number> {
  const t0 = performance.now();
  const res = await sparqlGet(s, RUNAWAY);
  const ms = performance.now() - t0;
  assert.equal(res.status, 503);
  const body = (await res.json()) as ErrorEnvelope;
  assert.equal(body.error.code, 'query_timeout');
  assert.equal(body.error.type, 'api_error');
  assert.equal(body.error.retryable, true);
  assert.ok(body.error.retry_after_seconds !== undefined && body.error.retry_after_seconds > 0);
  assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
  assert.ok(res.headers.get('x-request-id'));
  assert.ok(ms >= TIMEOUT_MS - 20, `answered after ${Math.round(ms)} ms, not before the timeout`);
  assert.ok(ms < TIMEOUT_MS + 1500, `answered after ${Math.round(ms)} ms, roughly the timeout of ${TIMEOUT_MS} ms`);
  return ms;
}

/** Retries a query while the replica is being rebuilt (typed 503s only), up to a few seconds. */
async function eventually(s: Stackd, query: string): Promise<Record<string, { value: string }>[]> {
  const until = performance.now() + 10_000;
  for (;;) {
    const res = await sparqlGet(s, query);
    if (res.status === 200) return ((await res.json()) as { results: { bindings: Record<string, { value: string }>[] } }).results.bindings;
    const body = (await res.json()) as ErrorEnvelope;
    assert.equal(res.status, 503, `only a retryable 503 while recovering, got ${res.status} ${JSON.stringify(body)}`);
    assert.equal(body.error.retryable, true);
    if (performance.now() > until) throw new Error(`not recovered: ${JSON.stringify(body)}`);
    await sleep(50);
  }
}

test('a runaway query is cut off at the timeout; the server keeps serving and recovers without a restart', async () => {
  const s = await startStackd({ args: ['--query-timeout-ms', String(TIMEOUT_MS)] });
  try {
    await load(s);

    const runaway = expectTimeout(s);
    // While the query runs, the HTTP loop is free.
    await sleep(50);
    const t0 = performance.now();
    const [version, health] = await Promise.all([fetch(s.url + '/version'), fetch(s.url + '/healthz')]);
    assert.equal(version.status, 200);
    await version.body?.cancel();
    assert.ok([200, 503].includes(health.status));
    await health.body?.cancel();
    assert.ok(performance.now() - t0 < TIMEOUT_MS, '/version and /healthz answer while the query runs');
    await runaway;

    // Right after: other requests are served, and queries soon again, with correct data.
    const status = await s.fetch('/v1/status');
    assert.equal(status.status, 200);
    await status.body?.cancel();
    const rows = await eventually(s, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
    assert.equal(Number(rows[0]!.n!.value), TRIPLES);
    const health2 = await fetch(s.url + '/healthz');
    assert.equal(health2.status, 200);
    await health2.body?.cancel();

    // A write after the timeout is visible in the rebuilt replica.
    const res = await importRdf(s, '<http://e/after> <http://e/p> "after the timeout" .\n');
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const after = await eventually(s, 'SELECT ?o WHERE { <http://e/after> <http://e/p> ?o }');
    assert.deepEqual(after.map((r) => r.o!.value), ['after the timeout']);
    assert.equal(await total(s), TRIPLES + 1);

    // And it happens again the same way: a second runaway, then normal service.
    await expectTimeout(s);
    const again = await eventually(s, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
    assert.equal(Number(again[0]!.n!.value), TRIPLES + 1);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('a write sent while the runaway query runs commits and is visible after the timeout', async () => {
  const s = await startStackd({ args: ['--query-timeout-ms', String(TIMEOUT_MS)] });
  try {
    await load(s);
    const runaway = expectTimeout(s);
    await sleep(50);
    const t0 = performance.now();
    const res = await importRdf(s, '<http://e/during> <http://e/p> "during" .\n');
    assert.equal(res.status, 200);
    const seq = ((await res.json()) as { committed_commit_seq: number }).committed_commit_seq;
    assert.equal(seq, 2);
    assert.ok(performance.now() - t0 < 5000);
    await runaway;
    const rows = await eventually(s, 'SELECT ?o WHERE { <http://e/during> <http://e/p> ?o }');
    assert.deepEqual(rows.map((r) => r.o!.value), ['during']);
    assert.equal(await total(s), TRIPLES + 1);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('with two query workers, one answers while the other is stuck', async () => {
  const s = await startStackd({ args: ['--query-timeout-ms', String(TIMEOUT_MS), '--query-workers', '2'] });
  try {
    await load(s);
    const runaway = expectTimeout(s);
    await sleep(50);
    // The other replica answers at once, well inside the stuck one's timeout.
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const res = await sparqlGet(s, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
      assert.equal(res.status, 200);
      const n = ((await res.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0]!.n.value;
      assert.equal(Number(n), TRIPLES);
      assert.ok(performance.now() - t0 < TIMEOUT_MS, 'answered by the free replica, not queued behind the stuck one');
    }
    await runaway;
    // Both serve again after the rebuild: two runaways at once time out together, then all is well.
    const one = await eventually(s, 'SELECT ?o WHERE { <http://e/s1> ?p ?o }');
    assert.deepEqual(one.map((r) => r.o!.value), ['1']);
    const until = performance.now() + 10_000;
    for (;;) {
      const h = (await (await fetch(s.url + '/healthz')).json()) as { ready_replicas: number };
      if (h.ready_replicas === 2) break;
      assert.ok(performance.now() < until, 'the second replica is rebuilt');
      await sleep(50);
    }
    await Promise.all([expectTimeout(s), expectTimeout(s)]);
    const rows = await eventually(s, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
    assert.equal(Number(rows[0]!.n!.value), TRIPLES);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

/** The server's log lines reach the test through a pipe, a little after the responses. */
const logSettles = () => sleep(300);

/** True when the server log says a replica was replaced because a query timed out. */
const replicaReplaced = (s: Stackd) => s.logs.some((l) => l.includes('replacing its replica'));

test('a query waiting for a long import is answered at the timeout and costs its replica nothing', async () => {
  const s = await startStackd({ args: ['--query-timeout-ms', String(TIMEOUT_MS)] });
  try {
    await eventually(s, 'SELECT ?o WHERE { <http://e/big/s7> ?p ?o }'); // a warm replica
    const lines: string[] = [];
    for (let i = 0; i < 150_000; i++) lines.push(`<http://e/big/s${i}> <http://e/p> "${i}" .`);
    const t0 = performance.now();
    const pending = importRdf(s, lines.join('\n') + '\n');
    lines.length = 0;
    // Queries sent while the import is being applied wait for it (no reader sees half a commit).
    const during: Response[] = [];
    for (let i = 0; i < 4; i++) {
      await sleep(250);
      during.push(await sparqlGet(s, 'ASK { <http://e/big/s7> ?p ?o }'));
    }
    const res = await pending;
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const importMs = performance.now() - t0;
    for (const r of during) {
      const body = await r.text();
      if (r.status === 200) continue;
      assert.equal(r.status, 503, body);
      const err = (JSON.parse(body) as ErrorEnvelope).error;
      assert.equal(err.code, 'query_timeout');
      assert.equal(err.retryable, true);
      assert.match(err.message, /waited/);
    }
    // The replica was not replaced: it answers at once, with the import in it.
    await logSettles();
    assert.equal(replicaReplaced(s), false, `no replica was replaced (import took ${Math.round(importMs)} ms)`);
    const t1 = performance.now();
    const after = await sparqlGet(s, 'ASK { <http://e/big/s149999> ?p ?o }');
    assert.equal(after.status, 200);
    assert.equal(((await after.json()) as { boolean: boolean }).boolean, true);
    assert.ok(performance.now() - t1 < TIMEOUT_MS);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('queries queued behind others on one replica are not mistaken for runaways', async (t) => {
  const timeout = 1000;
  const s = await startStackd({ args: ['--query-timeout-ms', String(timeout)] });
  try {
    await load(s);
    const results = await Promise.all(Array.from({ length: 20 }, () => sparqlGet(s, MEDIUM)));
    let ok = 0;
    for (const r of results) {
      const body = await r.text();
      if (r.status === 200) {
        ok++;
        assert.match(body, /"270000"/);
        continue;
      }
      assert.equal(r.status, 503, body);
      const err = (JSON.parse(body) as ErrorEnvelope).error;
      assert.equal(err.code, 'query_timeout');
      assert.match(err.message, /waited/, 'only queries that had not run yet are turned away');
    }
    assert.ok(ok >= 1);
    t.diagnostic(`${ok} of ${results.length} answered, ${results.length - ok} turned away after waiting ${timeout} ms`);
    await logSettles();
    assert.equal(replicaReplaced(s), false, 'the replica was not replaced');
    // The ones turned away were dropped, not run later: the replica is free at once.
    const t0 = performance.now();
    const rows = await selectRows(s, 'SELECT ?o WHERE { <http://e/s1> ?p ?o }');
    assert.deepEqual(rows.map((r) => r.o!.value), ['1']);
    assert.ok(performance.now() - t0 < 500, `answered in ${Math.round(performance.now() - t0)} ms`);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('pinned (as_of) reads: a runaway is cut off, the next read is served, queued reads do not drop the store', async () => {
  const timeout = 1000; // room for a fresh (cold) pinned worker's first query on a busy machine
  const s = await startStackd({ args: ['--query-timeout-ms', String(timeout)] });
  try {
    await load(s); // commit 1
    const res = await importRdf(s, '<http://e/later> <http://e/p> "2" .\n'); // commit 2: the head moves on
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const pinned = (q: string) => s.fetch(`/sparql?as_of_commit_seq=1&query=${encodeURIComponent(q)}`, { headers: { accept: 'application/sparql-results+json' } });
    const count = async () => {
      const r = await pinned('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');
      assert.equal(r.status, 200, await r.clone().text());
      return Number(((await r.json()) as { results: { bindings: { n: { value: string } }[] } }).results.bindings[0]!.n.value);
    };
    assert.equal(await count(), TRIPLES);
    const built = () => s.logs.filter((l) => l.includes('pinned store built')).length;
    await logSettles();
    assert.equal(built(), 1);

    const t0 = performance.now();
    const runaway = await pinned(RUNAWAY);
    assert.equal(runaway.status, 503);
    const err = ((await runaway.json()) as ErrorEnvelope).error;
    assert.equal(err.code, 'query_timeout');
    assert.equal(err.retryable, true);
    assert.ok(performance.now() - t0 < timeout + 1500);
    // The very next pinned read is served (from a fresh store), not refused by the dying one.
    assert.equal(await count(), TRIPLES);
    await logSettles();
    assert.equal(built(), 2);

    // ≈ 270k joined rows each: well inside the timeout alone, past it when queued.
    const burst = await Promise.all(Array.from({ length: 16 }, () => pinned(MEDIUM)));
    for (const r of burst) {
      const body = await r.text();
      if (r.status === 200) continue;
      assert.equal(r.status, 503, body);
      assert.match((JSON.parse(body) as ErrorEnvelope).error.message, /waited/);
    }
    await logSettles();
    assert.equal(built(), 2, 'queued reads did not drop the pinned store');
    assert.equal(await count(), TRIPLES);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});
