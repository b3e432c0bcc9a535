/**
 * Concurrent writers and crashes, black-box: dozens of parallel commits get strictly
 * increasing, gap-free commit_seqs; parallel requests with one Idempotency-Key write once;
 * mixed parallel writes (commit, retract, import) share one gap-free sequence; and every
 * acknowledged commit, with its idempotency record, survives SIGKILL + restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startStackd, removeDir, tempDataDir, type Stackd } from './helpers/server.js';
import { BASE, commit, getJson, headSeq, ok, postJson, postNdjson, sparql, triplet, type Json, type Reply } from './helpers/triplets.js';

const N = 40;

// `k` lives on one data directory and is killed and restarted by the crash tests; `s` takes the rest.
const dataDir = tempDataDir();
let k: Stackd;
let s: Stackd;

before(async () => {
  [k, s] = await Promise.all([startStackd({ dataDir }), startStackd()]);
});

after(async () => {
  await Promise.all([k?.stop(), s?.stop()]);
  removeDir(dataDir);
  if (s) removeDir(s.dataDir);
});

const workerFile = (tag: string, i: number) => ({
  triplets: [triplet(['Worker', `${tag}-${i}`], 'works_at', ['Company', `${tag}-co-${i % 5}`], { evidence: { text: `${tag} badge ${i}`, source_id: `${tag}-doc-${i}` } })],
  entity_properties: [{ type: 'Worker', name: `${tag}-${i}`, properties: { n: i } }],
});

function assertGapFree(seqs: number[], from: number, what: string) {
  const sorted = [...seqs].sort((a, b) => a - b);
  assert.deepEqual(sorted, Array.from({ length: seqs.length }, (_, i) => from + i), `${what}: distinct, gap-free commit_seqs from ${from}`);
}

/** The commit_seq that asserted a worker's edge, from the log (history), or null when it is not there. */
async function assertedAt(s: Stackd, tag: string, i: number): Promise<number | null> {
  const r = await postJson(s, '/v1/query/history', { source: { entity_type: 'Worker', name: `${tag}-${i}` }, relation: 'works_at' });
  if (r.status === 404) return null;
  const h = ok(r, 'history').history as Json[];
  assert.equal(h.length, 1, `${tag}-${i} asserted once`);
  return h[0]!.commit_seq as number;
}

async function workersInSparql(s: Stackd, tag: string): Promise<Set<string>> {
  const rows = await sparql(s, `SELECT ?name WHERE { ?w <${BASE}r/works_at> ?c . ?w <http://www.w3.org/2000/01/rdf-schema#label> ?name FILTER(STRSTARTS(?name, "${tag}-")) }`);
  return new Set(rows.map((r) => JSON.parse(r.name!) as string));
}

test(`${N} parallel commits: gap-free commit_seqs; SIGKILL right after the last ack loses nothing, idempotency records included`, async () => {
  const base = await headSeq(k);
  const replies = await Promise.all(Array.from({ length: N }, (_, i) => commit(k, workerFile('par', i), { key: `par-key-${i}` })));
  await k.kill(); // right after the last acknowledgement
  const seqs = replies.map((r, i) => {
    const b = ok(r, `commit ${i}`);
    assert.equal(b.replayed, false);
    assert.equal(b.no_op, false);
    return b.commit_seq as number;
  });
  assertGapFree(seqs, base + 1, 'parallel commits');

  k = await startStackd({ dataDir });
  const s = k; // the restarted server
  assert.equal(await headSeq(s), base + N);
  assert.equal((await workersInSparql(s, 'par')).size, N);
  for (let i = 0; i < N; i++) {
    assert.equal(await assertedAt(s, 'par', i), seqs[i], `worker ${i} was written by its own commit`);
    const detail = ok(await getJson(s, `/v1/graph/entity?type=Worker&name=par-${i}`));
    assert.deepEqual(detail.attributes, { n: i });
  }
  const w = ok(await postJson(s, '/v1/query/why', { source: { entity_type: 'Worker', name: 'par-7' }, relation: 'works_at', target: { entity_type: 'Company', name: 'par-co-2' } }));
  assert.deepEqual(w.observations.map((o: Json) => [o.evidence, o.source_id, o.commit_seq]), [['par badge 7', 'par-doc-7', seqs[7]]]);
  // Every key replays its own commit, in parallel too, and writes nothing.
  const again = await Promise.all(Array.from({ length: N }, (_, i) => commit(s, workerFile('par', i), { key: `par-key-${i}` })));
  again.forEach((r, i) => {
    const b = ok(r, `replay ${i}`);
    assert.equal(b.replayed, true, `key ${i} replayed`);
    assert.equal(b.commit.idempotent_replay, true);
    assert.equal(b.commit_seq, seqs[i]);
  });
  const reused = await commit(s, workerFile('par', 99), { key: 'par-key-0' });
  assert.equal(reused.status, 409);
  assert.equal(reused.body.error.code, 'idempotency_key_reused');
  assert.equal(await headSeq(s), base + N, 'replays wrote nothing');
  // The log agrees: one commit per request, in sequence.
  const changes = ok(await getJson(s, `/v1/graph/changes?since=${base}&limit=5000`));
  assert.deepEqual(changes.commits.map((c: Json) => c.commit_seq), Array.from({ length: N }, (_, i) => base + 1 + i));
  assert.equal(changes.edge_events.length, N);
});

test('parallel requests with one Idempotency-Key write once; the rest replay it', async () => {
  const base = await headSeq(s);
  const file = workerFile('same', 1);
  const replies = await Promise.all(Array.from({ length: 12 }, () => commit(s, file, { key: 'one-key' })));
  const bodies = replies.map((r) => ok(r, 'same-key commit'));
  assert.equal(bodies.filter((b) => b.replayed === false).length, 1, 'exactly one request wrote');
  assert.ok(bodies.every((b) => b.commit_seq === base + 1));
  assert.equal(await headSeq(s), base + 1);
  // One key, two bodies, in parallel: one wins, the other is refused.
  const race = await Promise.all([commit(s, workerFile('race', 1), { key: 'race-key' }), commit(s, workerFile('race', 2), { key: 'race-key' })]);
  assert.deepEqual(race.map((r) => r.status).sort(), [200, 409]);
  assert.equal(await headSeq(s), base + 2);
  const retracts = await Promise.all(Array.from({ length: 6 }, () => postJson(s, '/v1/graph/retract', {
    edges: [{ source: { type: 'Worker', name: 'same-1' }, relation: 'works_at', target: { type: 'Company', name: 'same-co-1' } }],
  }, { 'idempotency-key': 'retract-key' })));
  const rb = retracts.map((r) => ok(r, 'retract'));
  assert.equal(rb.filter((b) => !b.idempotent_replay).length, 1);
  assert.ok(rb.every((b) => b.commit_seq === base + 3));
  assert.equal(await headSeq(s), base + 3);
});

test('mixed parallel writes (commits, retracts, imports) share one gap-free sequence', async () => {
  for (let i = 0; i < 6; i++) ok(await commit(s, workerFile('old', i)));
  const base = await headSeq(s);
  const jobs: Promise<{ kind: string; seq: number }>[] = [];
  const seqOf = (kind: string, field: string) => (r: Reply) => {
    const b = ok(r, kind);
    return { kind, seq: b[field] as number };
  };
  for (let i = 0; i < 30; i++) jobs.push(commit(s, workerFile('mix', i)).then(seqOf('commit', 'commit_seq')));
  for (let i = 0; i < 6; i++) {
    jobs.push(postJson(s, '/v1/graph/retract', {
      edges: [{ source: { type: 'Worker', name: `old-${i}` }, relation: 'works_at', target: { type: 'Company', name: `old-co-${i % 5}` } }],
    }).then(seqOf('retract', 'commit_seq')));
  }
  for (let i = 0; i < 4; i++) jobs.push(postNdjson(s, '/v1/graph/import', [triplet(['Worker', `imp-${i}`], 'works_at', ['Company', 'imp-co'])]).then(seqOf('import', 'committed_commit_seq')));
  const done = await Promise.all(jobs);
  assertGapFree(done.map((d) => d.seq), base + 1, 'mixed writes');
  assert.equal(await headSeq(s), base + 40);
  assert.equal((await workersInSparql(s, 'mix')).size, 30);
  assert.equal((await workersInSparql(s, 'old')).size, 0);
  assert.equal((await workersInSparql(s, 'imp')).size, 4);
});

test('SIGKILL under concurrent writes: every acknowledged commit survives, unacknowledged ones are all or nothing, the log stays gap-free', async () => {
  const base = await headSeq(k);
  const outcomes: (number | null)[] = Array.from({ length: N }, () => null);
  let acked = 0;
  let onHalf!: () => void;
  const half = new Promise<void>((resolve) => (onHalf = resolve));
  const inflight = Array.from({ length: N }, async (_, i) => {
    try {
      const r = await commit(k, workerFile('kill', i), { key: `kill-key-${i}` });
      if (r.status === 200) {
        outcomes[i] = r.body.commit_seq as number;
        if (++acked === N / 2) onHalf();
      }
    } catch {
      /* the connection died with the process */
    }
  });
  await Promise.race([half, Promise.all(inflight)]);
  await k.kill();
  await Promise.all(inflight);
  const ackedSeqs = outcomes.filter((x): x is number => x !== null);
  assert.ok(ackedSeqs.length >= N / 2);
  assert.equal(new Set(ackedSeqs).size, ackedSeqs.length, 'acknowledged commit_seqs are distinct');

  k = await startStackd({ dataDir });
  const s = k; // the restarted server
  const head = await headSeq(s);
  assert.ok(head >= Math.max(...ackedSeqs));
  const present: number[] = [];
  for (let i = 0; i < N; i++) {
    const at = await assertedAt(s, 'kill', i);
    if (outcomes[i] !== null) assert.equal(at, outcomes[i], `acknowledged commit ${i} survived with its commit_seq`);
    if (at !== null) {
      present.push(at);
      // All or nothing: the edge and the property of one commit go together.
      assert.deepEqual(ok(await getJson(s, `/v1/graph/entity?type=Worker&name=kill-${i}`)).attributes, { n: i });
    } else {
      const e = await getJson(s, `/v1/graph/entity?type=Worker&name=kill-${i}`);
      assert.equal(e.status, 404, `an unwritten commit left no entity behind (${i})`);
    }
  }
  assertGapFree(present, base + 1, 'what survived');
  assert.equal(head, base + present.length);
  // Acknowledged keys replay their commit; the others either replay (they were written) or write now.
  for (let i = 0; i < N; i++) {
    const b = ok(await commit(s, workerFile('kill', i), { key: `kill-key-${i}` }));
    const at = await assertedAt(s, 'kill', i);
    if (outcomes[i] !== null) {
      assert.equal(b.replayed, true, `key ${i}`);
      assert.equal(b.commit_seq, outcomes[i]);
    }
    assert.equal(b.commit_seq, at);
  }
  assert.equal((await workersInSparql(s, 'kill')).size, N);
});
