/**
 * "An acknowledged write survives kill -9": black-box crash tests against the real server
 * process. Every import here writes statements that can be told apart afterwards, so a
 * restart can check exactly which writes are in the graph.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStackd, importRdf, countTriples, selectRows, removeDir, tempDataDir, type Stackd } from './helpers/server.js';

interface ImportReply {
  imported_triplets: number;
  committed_commit_seq: number | null;
}

/** Two statements that belong to import number `i` of batch `tag`. */
function smallBody(tag: string, i: number): string {
  return `<http://e/${tag}/s${i}> <http://e/p> "v${i}" .\n<http://e/${tag}/s${i}> <http://e/q> <http://e/${tag}/o${i}> .\n`;
}

async function countWhere(s: Stackd, pattern: string): Promise<number> {
  const rows = await selectRows(s, `SELECT (COUNT(*) AS ?n) WHERE { ${pattern} }`);
  return Number(rows[0]!.n!.value);
}

async function headSeq(s: Stackd): Promise<number> {
  const res = await s.fetch('/v1/status');
  assert.equal(res.status, 200);
  return ((await res.json()) as { head_seq: number }).head_seq;
}

/** Posts an import; resolves to its commit_seq when acknowledged, null when it was not (error or connection lost). */
async function ackedSeq(s: Stackd, body: string, query = '', key?: string): Promise<number | null> {
  try {
    const headers: Record<string, string> = { 'content-type': 'application/n-triples' };
    if (key) headers['idempotency-key'] = key;
    const res = await s.fetch('/v1/graph/import/rdf' + (query ? '?' + query : ''), { method: 'POST', headers, body });
    if (res.status !== 200) {
      await res.body?.cancel();
      return null;
    }
    const seq = ((await res.json()) as ImportReply).committed_commit_seq;
    assert.ok(typeof seq === 'number' && seq > 0, `an acknowledged import names its commit_seq (got ${seq})`);
    return seq;
  } catch {
    return null; // the process died under the request
  }
}

test('acknowledged imports survive SIGKILL; unacknowledged ones are all or nothing; commit_seq continues', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    const acked = new Map<number, number>(); // import number → commit_seq
    // Sequential: every ack is known before the kill, so the graph must be exactly these.
    for (let i = 0; i < 12; i++) {
      const seq = await ackedSeq(s, smallBody('seq', i));
      assert.notEqual(seq, null, `import ${i} was acknowledged`);
      acked.set(i, seq!);
    }
    // Blank nodes keep their identity through a restart.
    assert.notEqual(await ackedSeq(s, '_:b1 <http://e/bp> "x" .\n_:b1 <http://e/bq> "y" .\n'), null);
    const blankSeq = await headSeq(s);
    const seqs = [...acked.values()];
    for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1]! + 1, 'sequential imports get consecutive commit_seq');
    await s.kill();

    s = await startStackd({ dataDir });
    for (const i of acked.keys()) assert.equal(await countWhere(s, `<http://e/seq/s${i}> ?p ?o`), 2, `import ${i} is there`);
    assert.equal(await countWhere(s, '?b <http://e/bp> "x" . ?b <http://e/bq> "y"'), 1, 'one blank node, both statements');
    assert.equal(await countTriples(s), 2 * acked.size + 2);
    const last = blankSeq;
    assert.equal(await headSeq(s), last);

    // In flight: fire a burst (each with its Idempotency-Key) and kill as soon as the first one is acknowledged.
    const burstKey = (i: number) => `burst-${i}`;
    const burst = Array.from({ length: 10 }, (_, i) => ackedSeq(s, smallBody('burst', i), '', burstKey(i)));
    const first = await Promise.race(burst.map((p, i) => p.then((seq) => (seq === null ? new Promise<never>(() => {}) : i))));
    await s.kill();
    const outcomes = await Promise.all(burst);
    assert.notEqual(outcomes[first], null);

    s = await startStackd({ dataDir });
    let present = 0;
    for (let i = 0; i < outcomes.length; i++) {
      const n = await countWhere(s, `<http://e/burst/s${i}> ?p ?o`);
      if (outcomes[i] !== null) assert.equal(n, 2, `acknowledged burst import ${i} survived`);
      else assert.ok(n === 0 || n === 2, `unacknowledged burst import ${i} is all or nothing (found ${n} of 2)`);
      if (n === 2) present++;
    }
    assert.equal(await countTriples(s), 2 * acked.size + 2 + 2 * present);
    const head = await headSeq(s);
    assert.equal(head, last + present, 'commit_seq counts exactly the commits that survived');

    // The client retries every burst import with its key: each lands exactly once.
    const retried: number[] = [];
    for (let i = 0; i < outcomes.length; i++) {
      const res = await s.fetch('/v1/graph/import/rdf', {
        method: 'POST',
        headers: { 'content-type': 'application/n-triples', 'idempotency-key': burstKey(i) },
        body: smallBody('burst', i),
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as ImportReply;
      assert.equal(body.imported_triplets, 2, `retry of burst import ${i} reports the original outcome`);
      if (outcomes[i] !== null) {
        assert.equal(res.headers.get('idempotent-replayed'), 'true');
        assert.equal(body.committed_commit_seq, outcomes[i], 'replayed with its original commit_seq');
      }
      retried.push(body.committed_commit_seq!);
    }
    assert.deepEqual([...retried].sort((a, b) => a - b), Array.from({ length: outcomes.length }, (_, i) => last + 1 + i), 'exactly once, gap-free');
    assert.equal(await headSeq(s), last + outcomes.length);
    assert.equal(await countTriples(s), 2 * acked.size + 2 + 2 * outcomes.length);
    const after = await ackedSeq(s, smallBody('after', 0));
    assert.equal(after, last + outcomes.length + 1, 'commit_seq continues strictly increasing after the restart');
    await s.stop();
  } finally {
    removeDir(dataDir);
  }
});

test('SIGKILL during a large import leaves all of it or none of it, never a part', async (t) => {
  const LINES = 100_000;
  const parts: string[] = [];
  for (let i = 0; i < LINES; i++) parts.push(`<http://e/big/s${i % 5000}> <http://e/big/p${i % 7}> "${i}" .\n`);
  const big = parts.join('');
  parts.length = 0;
  assert.ok(Buffer.byteLength(big) < 64 * 1024 * 1024);

  /** One round on a fresh data dir: a few acknowledged small imports, then the big one, killed after `delayMs` (or not at all). */
  const round = async (delayMs: number | null): Promise<{ survived: boolean; acked: boolean; ms: number }> => {
    const dataDir = tempDataDir();
    try {
      let s = await startStackd({ dataDir });
      for (let i = 0; i < 3; i++) assert.notEqual(await ackedSeq(s, smallBody('base', i)), null);
      const t0 = performance.now();
      const pending = ackedSeq(s, big);
      if (delayMs !== null) await sleep(delayMs);
      else await pending;
      const ms = performance.now() - t0;
      await s.kill();
      const seq = await pending;
      s = await startStackd({ dataDir });
      try {
        const n = (await countTriples(s)) - 6;
        assert.ok(n === 0 || n === LINES, `killed after ${delayMs} ms: ${n} of ${LINES} statements survived`);
        if (seq !== null) assert.equal(n, LINES, `killed after ${delayMs} ms: the acknowledged import survived`);
        assert.equal(await countWhere(s, '?s <http://e/p> ?o'), 3, 'earlier acknowledged imports are intact');
        assert.equal(await headSeq(s), 3 + (n ? 1 : 0));
        return { survived: n === LINES, acked: seq !== null, ms };
      } finally {
        await s.kill();
      }
    } finally {
      removeDir(dataDir);
    }
  };

  // An uninterrupted load says how long one takes; the kills are spread over that time.
  const full = await round(null);
  assert.ok(full.acked && full.survived);
  const outcomes = [];
  for (const f of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
    const delay = Math.round(f * full.ms);
    const o = await round(delay);
    outcomes.push(`${delay} ms: ${o.acked ? 'acknowledged' : o.survived ? 'unacknowledged, committed' : 'not committed'}`);
  }
  t.diagnostic(`load of ${LINES} lines took ${Math.round(full.ms)} ms; kills: ${outcomes.join('; ')}`);
});

test('concurrent imports get distinct, gap-free, increasing commit_seq values, all durable', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    assert.notEqual(await ackedSeq(s, smallBody('pre', 0)), null);
    const before = await headSeq(s);
    const CLIENTS = 20;
    const seqs = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => ackedSeq(s, smallBody('conc', i))));
    for (const seq of seqs) assert.notEqual(seq, null);
    const sorted = [...(seqs as number[])].sort((a, b) => a - b);
    assert.deepEqual(sorted, Array.from({ length: CLIENTS }, (_, i) => before + 1 + i), 'distinct and gap-free');
    assert.equal(await headSeq(s), before + CLIENTS);
    await s.kill();

    s = await startStackd({ dataDir });
    for (let i = 0; i < CLIENTS; i++) assert.equal(await countWhere(s, `<http://e/conc/s${i}> ?p ?o`), 2);
    assert.equal(await countTriples(s), 2 * (CLIENTS + 1));
    await s.stop();
  } finally {
    removeDir(dataDir);
  }
});

test('an idempotency record survives a restart: same key and body replays, another body is 409', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    const key = 'durable-key-1';
    const body = smallBody('idem', 0);
    const first = await s.fetch('/v1/graph/import/rdf', { method: 'POST', headers: { 'content-type': 'application/n-triples', 'idempotency-key': key }, body });
    assert.equal(first.status, 200);
    const firstBody = (await first.json()) as ImportReply;
    assert.equal(firstBody.committed_commit_seq, 1);
    await s.kill();

    s = await startStackd({ dataDir });
    const replay = await s.fetch('/v1/graph/import/rdf', { method: 'POST', headers: { 'content-type': 'application/n-triples', 'idempotency-key': key }, body });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await replay.json(), firstBody, 'the stored response is replayed');
    assert.equal(await headSeq(s), 1, 'a replay writes no commit');
    assert.equal(await countTriples(s), 2);

    const other = await s.fetch('/v1/graph/import/rdf', {
      method: 'POST',
      headers: { 'content-type': 'application/n-triples', 'idempotency-key': key },
      body: smallBody('idem', 1),
    });
    assert.equal(other.status, 409);
    const err = (await other.json()) as { error: { code: string; retryable: boolean } };
    assert.equal(err.error.code, 'idempotency_key_reused');
    assert.equal(err.error.retryable, false);
    assert.equal(await countTriples(s), 2, 'the refused request wrote nothing');
    assert.equal(await ackedSeq(s, smallBody('idem', 2)), 2, 'the next commit follows without a gap');
    await s.stop();
  } finally {
    removeDir(dataDir);
  }
});

test('rejected input changes nothing, in the head and after a restart', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    for (let i = 0; i < 3; i++) assert.notEqual(await ackedSeq(s, smallBody('good', i)), null);
    // Blank nodes too: they are loaded into the head term by term.
    assert.notEqual(await ackedSeq(s, '_:b1 <http://e/p> "blank" .\n_:b1 <http://e/q> _:b2 .\n'), null);
    const count = await countTriples(s);
    const head = await headSeq(s);

    // Strict, error after several chunks have been loaded into the head: all of it is undone.
    const lines: string[] = [];
    for (let i = 0; i < 9000; i++) lines.push(i % 2 ? `_:x${i} <http://e/bad> "${i}" .` : `<http://e/bad/s${i}> <http://e/bad> "${i}" .`);
    lines.push('<http://e/bad/s> <http://e/bad> "unterminated .');
    const strict = await importRdf(s, lines.join('\n') + '\n', 'strict=true');
    assert.equal(strict.status, 400);
    const strictErr = (await strict.json()) as { error: { code: string } };
    assert.equal(strictErr.error.code, 'rdf_syntax_error');
    // Turtle cannot resynchronise: an error fails the whole document.
    const ttl = await importRdf(s, '<http://e/t1> <http://e/bad> "a" .\n<http://e/t2> <http://e/bad> .\n', '', 'text/turtle');
    assert.equal(ttl.status, 400);
    await ttl.body?.cancel();
    const notUtf8 = await s.fetch('/v1/graph/import/rdf', {
      method: 'POST',
      headers: { 'content-type': 'application/n-triples' },
      body: new Uint8Array([0x3c, 0x68, 0xff, 0xfe, 0x3e, 0x0a]),
    });
    assert.equal(notUtf8.status, 400);
    await notUtf8.body?.cancel();

    assert.equal(await countTriples(s), count, 'the head is unchanged');
    assert.equal(await countWhere(s, '?s <http://e/bad> ?o'), 0);
    assert.equal(await headSeq(s), head, 'no commit was written');
    await s.kill();

    s = await startStackd({ dataDir });
    assert.equal(await countTriples(s), count, 'after a restart too');
    assert.equal(await countWhere(s, '?s <http://e/bad> ?o'), 0);
    assert.equal(await headSeq(s), head);
    assert.equal(await ackedSeq(s, smallBody('good', 9)), head + 1);
    await s.stop();
  } finally {
    removeDir(dataDir);
  }
});
