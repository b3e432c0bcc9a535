/**
 * The edge of the head store: a write that does not fit in a replica (its WASM engine traps,
 * in practice out of its 4 GiB memory) is refused with 507 store_capacity_exceeded, nothing
 * of it is durable or visible, the replica is rebuilt from SQLite, and the server goes on.
 * Filling 4 GiB takes minutes (bench/scale.ts does it for real); here the engine trap is
 * injected by STACKD_FAULT_HEAD_TRAP_ON on a load whose text contains a marker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStackd, importRdf, selectRows, removeDir, tempDataDir, type Stackd } from './helpers/server.js';

const MARKER = 'urn:capacity-trap';
const env = { STACKD_FAULT_HEAD_TRAP_ON: MARKER };

/** COUNT of all statements, waiting while the replica is rebuilt (503 until it is ready). */
async function countWhenReady(s: Stackd): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await s.fetch('/sparql?query=' + encodeURIComponent('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }'), {
      headers: { accept: 'application/sparql-results+json' },
    });
    if (res.status === 200) {
      const j = (await res.json()) as { results: { bindings: { n: { value: string } }[] } };
      return Number(j.results.bindings[0]!.n.value);
    }
    await res.body?.cancel();
    assert.ok(Date.now() < deadline, `no replica answered within 30 s (last status ${res.status})`);
    await sleep(100);
  }
}

async function assertCapacityError(res: Response) {
  assert.equal(res.status, 507);
  const body = (await res.json()) as { error: { type: string; code: string; retryable: boolean; message: string } };
  assert.equal(body.error.type, 'api_error');
  assert.equal(body.error.code, 'store_capacity_exceeded');
  assert.equal(body.error.retryable, false);
  assert.match(body.error.message, /nothing was written/);
}

test('a write the head store cannot hold: 507 store_capacity_exceeded, nothing written, replica rebuilt, data intact across kill -9', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir, env, args: ['--query-workers', '2'] });
    const base = Array.from({ length: 50 }, (_, i) => `<http://e/s${i}> <http://e/p> "v${i}" .`).join('\n') + '\n';
    const ok = await importRdf(s, base);
    assert.equal(ok.status, 200);
    assert.equal(await countWhenReady(s), 50);
    const seqBefore = ((await (await s.fetch('/v1/status')).json()) as { head_seq: number }).head_seq;

    // An RDF import whose delta traps the engine part-way (many statements before the marker).
    const big = Array.from({ length: 3000 }, (_, i) => `<http://e/big${i}> <http://e/p> "b${i}" .`).join('\n') + `\n<${MARKER}> <http://e/p> "x" .\n`;
    await assertCapacityError(await importRdf(s, big));
    // A triplet commit whose delta traps.
    const commit = await s.fetch('/v1/graph/commit', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ triplets: [{ source: { type: 'Thing', name: MARKER }, relation: 'rel', target: { type: 'Thing', name: 'other' } }] }),
    });
    await assertCapacityError(commit);

    // The process stays live while its replicas are rebuilt (a supervisor must not restart it).
    const health = await fetch(s.url + '/healthz');
    assert.equal(health.status, 200);
    assert.ok(['ok', 'degraded'].includes(((await health.json()) as { status: string }).status));

    // Nothing of either is visible or durable; the commit log did not move.
    assert.equal(await countWhenReady(s), 50);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const h = (await (await fetch(s.url + '/healthz')).json()) as { status: string; ready_replicas: number };
      if (h.status === 'ok') {
        assert.equal(h.ready_replicas, 2);
        break;
      }
      assert.equal(h.status, 'degraded');
      assert.ok(Date.now() < deadline, 'both replicas are rebuilt');
      await sleep(50);
    }
    assert.equal(((await (await s.fetch('/v1/status')).json()) as { head_seq: number }).head_seq, seqBefore);
    assert.ok(s.logs.some((l) => l.includes('rebuilding it from durable state')), 'the broken replica was replaced');

    // The server goes on: the next write that fits is acknowledged and visible.
    const after = await importRdf(s, '<http://e/after> <http://e/p> "a" .\n');
    assert.equal(after.status, 200);
    assert.equal(await countWhenReady(s), 51);

    await s.kill();
    s = await startStackd({ dataDir });
    try {
      assert.equal(await countWhenReady(s), 51);
      const rows = await selectRows(s, `SELECT ?s WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?s), "http://e/big") || ?s = <${MARKER}>) }`);
      assert.deepEqual(rows, []);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});
