/**
 * Time travel and provenance, black-box: as_of_commit_seq past the head on every route that
 * takes it, as_of_valid_time on SPARQL / state / entity reads, why (evidence of each
 * observation), history (asserts and retracts with what they supersede), transitions
 * (ordered by valid time, with dwell), entity reads (by name, by id, attributes, metadata,
 * neighborhood, sample), changes with paging, read-snapshot publication, metadata.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStackd, removeDir, type Stackd } from './helpers/server.js';
import { assertError } from './helpers/http.js';
import {
  BASE, RDFS_LABEL, commit, commitOk, entityIri, exportNt, getJson, headSeq, ok, postJson, postNdjson, rel, sparql, sparqlText, stateOf, triplet, type Json,
} from './helpers/triplets.js';

let s: Stackd;

before(async () => {
  s = await startStackd();
});

after(async () => {
  await s?.stop();
  if (s) removeDir(s.dataDir);
});

const micros = (iso: string) => Date.parse(iso) * 1000;
const sel = (type: string, name: string) => ({ entity_type: type, name });

describe('as_of_commit_seq and min_indexed_seq bounds', () => {
  test('as_of_commit_seq past the head is 400 commit_seq_out_of_range on every route that takes it', async () => {
    await commitOk(s, { triplets: [triplet(['Person', 'Pin'], 'knows', ['Person', 'Point'])] });
    const head = await headSeq(s);
    const past = head + 5;
    const q = encodeURIComponent('SELECT * WHERE { ?s ?p ?o } LIMIT 1');
    const gets = [
      `/sparql?query=${q}&as_of_commit_seq=${past}`,
      `/v1/graph/export/rdf?format=nt&as_of_commit_seq=${past}`,
      `/v1/graph/entity?type=Person&name=Pin&as_of_commit_seq=${past}`,
      `/v1/graph/entity/metadata?type=Person&name=Pin&as_of_commit_seq=${past}`,
      `/v1/graph/entity/neighborhood?type=Person&name=Pin&as_of_commit_seq=${past}`,
    ];
    for (const path of gets) {
      const e = await assertError(await s.fetch(path, { headers: { accept: 'application/sparql-results+json' } }), 400, 'commit_seq_out_of_range');
      assert.equal(e.param, 'as_of_commit_seq', path);
      assert.match(e.message, new RegExp(String(head)));
    }
    const posts: [string, Json][] = [
      [`/v1/query/sparql-text?as_of_commit_seq=${past}`, { query: 'SELECT * WHERE { ?s ?p ?o }' }],
      ['/v1/query/state', { entity: sel('Person', 'Pin'), as_of_commit_seq: past }],
      ['/v1/query/history', { source: sel('Person', 'Pin'), as_of_commit_seq: past }],
      ['/v1/query/why', { source: sel('Person', 'Pin'), relation: 'knows', target: sel('Person', 'Point'), as_of_commit_seq: past }],
      ['/v1/query/transitions', { entity: sel('Person', 'Pin'), relation: 'knows', as_of_commit_seq: past }],
    ];
    for (const [path, body] of posts) {
      const res = await s.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const e = await assertError(res, 400, 'commit_seq_out_of_range');
      assert.equal(e.param, 'as_of_commit_seq', path);
    }
    // Malformed pins are 400s too.
    for (const path of [`/sparql?query=${q}&as_of_commit_seq=-1`, `/sparql?query=${q}&as_of_commit_seq=two`, `/v1/graph/entity?type=Person&name=Pin&as_of_commit_seq=x`]) {
      const res = await s.fetch(path);
      assert.equal(res.status, 400, path);
      await res.body?.cancel();
    }
    const badTime = await s.fetch(`/sparql?query=${q}&as_of_valid_time=2021-02-30T00:00:00Z`);
    await assertError(badTime, 400, 'invalid_timestamp');
    const badTime2 = await postJson(s, '/v1/query/state', { entity: sel('Person', 'Pin'), as_of_valid_time: 'last tuesday' });
    assert.equal(badTime2.status, 400);
    assert.equal(badTime2.body.error.code, 'invalid_timestamp');
    // The head itself and 0 are in range.
    assert.equal((await sparql(s, 'SELECT * WHERE { ?s ?p ?o }', `as_of_commit_seq=${head}`)).length, 5);
    assert.equal((await sparql(s, 'SELECT * WHERE { ?s ?p ?o }', 'as_of_commit_seq=0')).length, 0);
  });

  test('min_indexed_seq past the head is 429 read_your_writes_pending on temporal and entity reads', async () => {
    const head = await headSeq(s);
    const floor = `consistency=strong&min_indexed_seq=${head + 1}`;
    for (const path of [`/v1/graph/entity?type=Person&name=Pin&${floor}`, `/v1/graph/entities/sample?type=Person&${floor}`]) {
      const res = await s.fetch(path);
      assert.ok(res.headers.get('retry-after'), path);
      const e = await assertError(res, 429, 'read_your_writes_pending', 'rate_limit_error');
      assert.equal(e.retryable, true);
    }
    for (const [path, body] of [
      ['/v1/query/state', { entity: sel('Person', 'Pin') }],
      ['/v1/query/history', { source: sel('Person', 'Pin') }],
      ['/v1/query/why', { source: sel('Person', 'Pin'), relation: 'knows', target: sel('Person', 'Point') }],
      ['/v1/query/transitions', { entity: sel('Person', 'Pin'), relation: 'knows' }],
    ] as const) {
      const res = await s.fetch(`${path}?${floor}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.ok(res.headers.get('retry-after'), path);
      await assertError(res, 429, 'read_your_writes_pending', 'rate_limit_error');
      // At the head the same read is served.
      const okRes = await s.fetch(`${path}?consistency=strong&min_indexed_seq=${head}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(okRes.status, 200, path);
      await okRes.body?.cancel();
    }
  });
});

describe('valid time', () => {
  test('as_of_valid_time selects edges by valid_time: valid 2020–2022 is visible at 2021, not at 2023', async () => {
    const seq = await commitOk(s, {
      triplets: [
        triplet(['Person', 'Vik'], 'works_at', ['Company', 'Oldco'], { valid_time: { start: '2020-01-01T00:00:00Z', end: '2022-01-01T00:00:00Z', granularity: 'day' } }),
        triplet(['Person', 'Vik'], 'works_at', ['Company', 'Newco'], { valid_time: { start: '2022-06-01T00:00:00Z' } }),
      ],
    });
    const vik = await entityIri(s, 'Person', 'Vik');
    const oldco = await entityIri(s, 'Company', 'Oldco');
    const newco = await entityIri(s, 'Company', 'Newco');
    const q = `SELECT ?o WHERE { ${vik} <${BASE}r/works_at> ?o }`;
    const at = (t: string) => `as_of_valid_time=${encodeURIComponent(t)}`;
    // Head (no pin): both are current knowledge.
    assert.equal((await sparql(s, q)).length, 2);
    const cases: [string, string[], string[]][] = [
      ['2021-01-01T00:00:00Z', [oldco], ['works_at→Oldco']],
      ['2020-01-01T00:00:00Z', [oldco], ['works_at→Oldco']],
      ['2022-01-01T00:00:00Z', [], []], // the end is exclusive
      ['2022-03-01T00:00:00Z', [], []],
      ['2023-01-01T00:00:00Z', [newco], ['works_at→Newco']],
      ['2019-12-31T23:59:59Z', [], []],
      ['2021-01-01T02:00:00+02:00', [oldco], ['works_at→Oldco']],
    ];
    for (const [t, iris, names] of cases) {
      assert.deepEqual((await sparql(s, q, at(t))).map((r) => r.o), iris, `SPARQL at ${t}`);
      assert.deepEqual((await sparqlText(s, q, at(t))).rows.map((r) => r.o), iris, `sparql-text at ${t}`);
      assert.deepEqual(await stateOf(s, 'Person', 'Vik', { as_of_valid_time: t }), names, `state at ${t}`);
      const detail = ok(await getJson(s, `/v1/graph/entity?type=Person&name=Vik&${at(t)}`));
      assert.deepEqual(detail.current_state.map((e: Json) => `works_at→${e.target.name}`), names, `entity at ${t}`);
      const hood = ok(await getJson(s, `/v1/graph/entity/neighborhood?type=Person&name=Vik&${at(t)}`));
      assert.deepEqual(hood.outgoing.map((e: Json) => `works_at→${e.peer.name}`), names, `neighborhood at ${t}`);
      const nt = (await exportNt(s, at(t))).filter((l) => l.startsWith(`${vik} ${rel('works_at')}`));
      assert.deepEqual(nt, iris.map((o) => `${vik} ${rel('works_at')} ${o}`), `export at ${t}`);
    }
    // Entity identity is timeless: labels resolve whatever the instant.
    assert.deepEqual(await sparql(s, `SELECT ?l WHERE { ${oldco} <${RDFS_LABEL}> ?l }`, at('1900-01-01T00:00:00Z')), [{ l: '"Oldco"' }]);
    // Both pins together: knowledge before the commit knows nothing of Vik's jobs.
    assert.deepEqual(await sparql(s, q, `as_of_commit_seq=${seq - 1}&${at('2021-01-01T00:00:00Z')}`), []);
    assert.deepEqual(await stateOf(s, 'Person', 'Vik', { as_of_commit_seq: seq - 1, as_of_valid_time: '2021-01-01T00:00:00Z' }), []);
    const st = ok(await postJson(s, '/v1/query/state', { entity: sel('Person', 'Vik') }));
    const oldEdge = st.state.find((e: Json) => e.target.name === 'Oldco');
    assert.deepEqual(oldEdge.valid_time, { start_micros: micros('2020-01-01T00:00:00Z'), end_micros: micros('2022-01-01T00:00:00Z'), granularity: 'day', source_text: null });
  });

  test('re-asserting an edge with another valid time: SPARQL and state agree at every instant', async () => {
    const first = await commitOk(s, { triplets: [triplet(['Person', 'Vera'], 'lives_in', ['City', 'Rome'], { valid_time: { start: '2000-01-01T00:00:00Z', end: '2002-01-01T00:00:00Z' } })] });
    const second = await commitOk(s, { triplets: [triplet(['Person', 'Vera'], 'lives_in', ['City', 'Rome'], { valid_time: { start: '2005-01-01T00:00:00Z', end: '2007-01-01T00:00:00Z' } })] });
    assert.equal(second, first + 1);
    const vera = await entityIri(s, 'Person', 'Vera');
    const q = `SELECT ?o WHERE { ${vera} <${BASE}r/lives_in> ?o }`;
    // Each assertion states an interval; the edge is valid within any of them (as known at the pin).
    const expect: [string, number, boolean][] = [
      ['2006-01-01T00:00:00Z', second, true],
      ['2003-01-01T00:00:00Z', second, false],
      ['2001-01-01T00:00:00Z', second, true],
      ['2008-01-01T00:00:00Z', second, false],
      ['2006-01-01T00:00:00Z', first, false],
      ['2001-01-01T00:00:00Z', first, true],
    ];
    for (const [t, seq, visible] of expect) {
      const pin = `as_of_valid_time=${t}${seq === second ? '' : `&as_of_commit_seq=${seq}`}`;
      assert.equal((await sparql(s, q, pin)).length, visible ? 1 : 0, `SPARQL ${pin}`);
      const state = await stateOf(s, 'Person', 'Vera', { as_of_valid_time: t, ...(seq === second ? {} : { as_of_commit_seq: seq }) });
      assert.deepEqual(state, visible ? ['lives_in→Rome'] : [], `state ${pin}`);
    }
    // History says the second assertion superseded the first.
    const h = ok(await postJson(s, '/v1/query/history', { source: sel('Person', 'Vera'), relation: 'lives_in' }));
    assert.deepEqual(h.history.map((e: Json) => [e.op, e.commit_seq]), [['assert', first], ['assert', second]]);
    assert.deepEqual(h.history[1].supersedes, [h.history[0].edge_event_id]);
  });

  test('an open-ended edge is valid from its commit until it is retracted', async () => {
    const t0 = new Date().toISOString();
    await sleep(5);
    await commitOk(s, { triplets: [triplet(['Person', 'Otto'], 'uses', ['Tool', 'Hammer'])] });
    await sleep(5);
    const t1 = new Date().toISOString();
    await sleep(5);
    ok(await postJson(s, '/v1/graph/retract', { edges: [{ source: { type: 'Person', name: 'Otto' }, relation: 'uses', target: { type: 'Tool', name: 'Hammer' } }] }));
    await sleep(5);
    const t2 = new Date().toISOString();
    const otto = await entityIri(s, 'Person', 'Otto');
    const q = `SELECT ?o WHERE { ${otto} <${BASE}r/uses> ?o }`;
    for (const [t, n] of [[t0, 0], [t1, 1], [t2, 0]] as const) {
      assert.equal((await sparql(s, q, `as_of_valid_time=${t}`)).length, n, `SPARQL at ${t}`);
      assert.equal((await stateOf(s, 'Person', 'Otto', { as_of_valid_time: t })).length, n, `state at ${t}`);
    }
  });
});

describe('provenance: why, history, transitions', () => {
  test('why names the evidence of each observation: text, source_id, confidence, commit_seq', async () => {
    const vt = { start: '2020-01-01T00:00:00Z', end: '2022-01-01T00:00:00Z' };
    const a1 = await commitOk(s, { triplets: [triplet(['Person', 'Tina'], 'works_at', ['Company', 'Tco'], { confidence: 0.8, evidence: { text: 'Tina joined Tco', source_id: 'doc-a' }, valid_time: vt })] });
    const a2 = await commitOk(s, { triplets: [triplet(['Person', 'Tina'], 'works_at', ['Company', 'Tco'], { confidence: 0.95, evidence: { text: 'payroll record 2021', source_id: 'doc-b' }, valid_time: vt })] });
    const w = ok(await postJson(s, '/v1/query/why', { source: sel('Person', 'Tina'), relation: 'works_at', target: sel('Company', 'Tco') }));
    assert.equal(w.observations.length, 2);
    assert.deepEqual(w.observations.map((o: Json) => [o.evidence, o.source_id, o.confidence, o.commit_seq]), [
      ['Tina joined Tco', 'doc-a', 0.8, a1],
      ['payroll record 2021', 'doc-b', 0.95, a2],
    ]);
    assert.deepEqual(w.evidence, w.observations.map((o: Json) => o.id), 'evidence lists the observation ids');
    assert.equal(w.current_edge, w.observations[1].edge_event_id);
    assert.deepEqual(w.previous_edges, [w.observations[0].edge_event_id]);
    assert.equal(w.snapshot.commit_seq, await headSeq(s));
    for (const o of w.observations) assert.deepEqual(o.valid_time, { start_micros: micros(vt.start), end_micros: micros(vt.end), granularity: 'instant', source_text: null });
    // As of the first commit only the first observation existed.
    const w1 = ok(await postJson(s, '/v1/query/why', { source: sel('Person', 'Tina'), relation: 'works_at', target: sel('Company', 'Tco'), as_of_commit_seq: a1 }));
    assert.equal(w1.observations.length, 1);
    assert.equal(w1.observations[0].source_id, 'doc-a');
    assert.equal(w1.current_edge, w1.observations[0].edge_event_id);
    assert.equal(w1.snapshot.as_of_commit_seq, a1);
    // The detail read carries the same observations.
    const detail = ok(await getJson(s, '/v1/graph/entity?type=Person&name=Tina'));
    // RelationView.id is the contract's RelationTypeId (a non-negative int32), the same in every read.
    const relId = detail.current_state[0].relation.id;
    assert.ok(Number.isInteger(relId) && relId >= 0 && relId < 2 ** 31, `relation id ${relId}`);
    assert.equal(detail.current_state[0].relation.name, 'works_at');
    const st = ok(await postJson(s, '/v1/query/state', { entity: sel('Person', 'Tina') }));
    const tr = ok(await postJson(s, '/v1/query/transitions', { entity: sel('Person', 'Tina'), relation: 'Works_At' }));
    const hi = ok(await postJson(s, '/v1/query/history', { source: sel('Person', 'Tina') }));
    assert.deepEqual([st.state[0].relation, tr.relation, hi.history[0].relation, detail.history[0].relation, detail.outgoing[0].relation], Array(5).fill({ id: relId, name: 'works_at' }));
    assert.deepEqual(detail.observations.map((o: Json) => [o.text, o.source_id, o.created_at_commit]).sort(), [
      ['Tina joined Tco', 'doc-a', a1],
      ['payroll record 2021', 'doc-b', a2],
    ].sort());
    // Evidence as a plain string.
    await commitOk(s, { triplets: [triplet(['Person', 'Tina'], 'likes', ['Food', 'Tea'], { evidence: 'said so at lunch' })] });
    const w2 = ok(await postJson(s, '/v1/query/why', { source: sel('Person', 'Tina'), relation: 'likes', target: sel('Food', 'Tea') }));
    assert.equal(w2.observations[0].evidence, 'said so at lunch');
    assert.equal(w2.observations[0].source_id, null);
    assert.equal(w2.observations[0].confidence, 1);
    // Unknown endpoints and missing fields.
    const nf = await postJson(s, '/v1/query/why', { source: sel('Person', 'Nobody'), relation: 'works_at', target: sel('Company', 'Tco') });
    assert.equal(nf.status, 404);
    assert.equal(nf.body.error.code, 'entity_not_found');
    const miss = await postJson(s, '/v1/query/why', { source: sel('Person', 'Tina'), target: sel('Company', 'Tco') });
    assert.equal(miss.status, 400);
    assert.equal(miss.body.error.code, 'missing_field');
  });

  test('history lists asserts and retracts in order, with what each supersedes; why after the retraction', async () => {
    const a3 = await commitOk(s, { triplets: [triplet(['Person', 'Tina'], 'works_at', ['Company', 'Tnew'])] });
    const rt = ok(await postJson(s, '/v1/graph/retract', { edges: [{ source: { type: 'Person', name: 'Tina' }, relation: 'works_at', target: { type: 'Company', name: 'Tco' } }] }));
    const a4 = rt.commit_seq as number;
    const h = ok(await postJson(s, '/v1/query/history', { source: sel('Person', 'Tina'), relation: 'works_at' }));
    assert.deepEqual(h.source.name, 'Tina');
    const rows = h.history;
    assert.deepEqual(rows.map((e: Json) => [e.op, e.target.name]), [['assert', 'Tco'], ['assert', 'Tco'], ['assert', 'Tnew'], ['retract', 'Tco']]);
    const seqs: number[] = rows.map((e: Json) => e.commit_seq);
    assert.deepEqual([...seqs].sort((x, y) => x - y), seqs, 'in commit order');
    assert.equal(seqs[2], a3);
    assert.equal(seqs[3], a4);
    const ids: number[] = rows.map((e: Json) => Number(e.edge_event_id));
    assert.deepEqual([...ids].sort((x, y) => x - y), ids);
    assert.deepEqual(rows[0].supersedes, []);
    assert.deepEqual(rows[1].supersedes, [rows[0].edge_event_id]);
    assert.deepEqual(rows[2].supersedes, []);
    assert.deepEqual(rows[3].supersedes, [rows[1].edge_event_id], 'the retraction supersedes the last assertion');
    assert.deepEqual(rt.edge_event_ids, [rows[3].edge_event_id]);
    for (const e of rows) {
      assert.equal(e.relation.name, 'works_at');
      assert.ok(Array.isArray(e.evidence));
      assert.equal(typeof e.confidence, 'number');
      assert.ok(e.valid_time && typeof e.valid_time.granularity === 'string');
    }
    assert.equal(rows[0].evidence.length, 1);
    assert.deepEqual(rows[3].evidence, []);
    // Without a relation: every relation of the source.
    const all = ok(await postJson(s, '/v1/query/history', { source: sel('Person', 'Tina') }));
    assert.deepEqual(new Set(all.history.map((e: Json) => e.relation.name)), new Set(['works_at', 'likes']));
    // Pinned before the retraction.
    const before = ok(await postJson(s, '/v1/query/history', { source: sel('Person', 'Tina'), relation: 'works_at', as_of_commit_seq: a3 }));
    assert.equal(before.history.length, 3);
    // why after the retraction: no current edge, the retraction named, the evidence still there.
    const w = ok(await postJson(s, '/v1/query/why', { source: sel('Person', 'Tina'), relation: 'works_at', target: sel('Company', 'Tco') }));
    assert.equal(w.current_edge, null);
    assert.equal(w.observations.length, 2);
    assert.deepEqual(w.retractions.map((x: Json) => x.commit_seq), [a4]);
    assert.ok(w.previous_edges.includes(rows[3].edge_event_id));
    assert.deepEqual(await stateOf(s, 'Person', 'Tina', { relations: ['works_at'] }), ['works_at→Tnew']);
    assert.deepEqual(await stateOf(s, 'Person', 'Tina', { relations: ['works_at'], as_of_commit_seq: a3 }), ['works_at→Tco', 'works_at→Tnew']);
  });

  test('transitions are ordered by valid_time.start (else commit time) with dwell', async () => {
    // Committed out of order on purpose.
    const c = await commitOk(s, { triplets: [triplet(['Person', 'Ursula'], 'lives_in', ['City', 'Cairo'], { valid_time: { start: '2015-01-01T00:00:00Z' } })] });
    const a = await commitOk(s, { triplets: [triplet(['Person', 'Ursula'], 'lives_in', ['City', 'Athens'], { valid_time: { start: '2010-01-01T00:00:00Z', end: '2012-01-01T00:00:00Z' } })] });
    const b = await commitOk(s, { triplets: [triplet(['Person', 'Ursula'], 'lives_in', ['City', 'Bern'], { valid_time: { start: '2012-01-01T00:00:00Z', end: '2015-01-01T00:00:00Z' } })] });
    const before = Date.now();
    const d = await commitOk(s, { triplets: [triplet(['Person', 'Ursula'], 'lives_in', ['City', 'Dakar'])] });
    const afterCommit = Date.now();
    const t = ok(await postJson(s, '/v1/query/transitions', { entity: sel('Person', 'Ursula'), relation: 'lives_in' }));
    assert.equal(t.entity.name, 'Ursula');
    assert.equal(t.relation.name, 'lives_in');
    assert.equal(typeof t.is_state_relation, 'boolean');
    assert.equal(typeof t.reducer, 'string');
    assert.equal(t.snapshot.commit_seq, d);
    const rows = t.transitions as Json[];
    assert.deepEqual(rows.map((x) => x.target.name), ['Athens', 'Bern', 'Cairo', 'Dakar']);
    assert.deepEqual(rows.map((x) => x.commit_seq), [a, b, c, d]);
    assert.deepEqual(rows.map((x) => x.at_from_valid_time), [true, true, true, false]);
    assert.deepEqual(rows.slice(0, 3).map((x) => x.at_micros), ['2010-01-01T00:00:00Z', '2012-01-01T00:00:00Z', '2015-01-01T00:00:00Z'].map(micros));
    assert.ok(rows[3]!.at_micros >= before * 1000 - 1000 && rows[3]!.at_micros <= afterCommit * 1000 + 1000, 'the fallback is the commit time');
    assert.equal(rows[0]!.dwell_micros, micros('2012-01-01T00:00:00Z') - micros('2010-01-01T00:00:00Z'));
    assert.equal(rows[1]!.dwell_micros, micros('2015-01-01T00:00:00Z') - micros('2012-01-01T00:00:00Z'));
    assert.equal(rows[2]!.dwell_micros, rows[3]!.at_micros - micros('2015-01-01T00:00:00Z'));
    assert.equal(rows[3]!.dwell_micros, null, 'the current value has no dwell');
    for (const x of rows) {
      assert.match(x.edge_event_id, /^\d+$/);
      assert.equal(x.confidence, 1);
    }
    // Pinned: knowledge as of the first commit; instants before 2013.
    const pinned = ok(await postJson(s, '/v1/query/transitions', { entity: sel('Person', 'Ursula'), relation: 'lives_in', as_of_commit_seq: c }));
    assert.deepEqual(pinned.transitions.map((x: Json) => x.target.name), ['Cairo']);
    assert.equal(pinned.transitions[0].dwell_micros, null);
    const early = ok(await postJson(s, '/v1/query/transitions', { entity: sel('Person', 'Ursula'), relation: 'lives_in', as_of_valid_time: '2013-01-01T00:00:00Z' }));
    assert.deepEqual(early.transitions.map((x: Json) => x.target.name), ['Athens', 'Bern']);
    const none = ok(await postJson(s, '/v1/query/transitions', { entity: sel('Person', 'Ursula'), relation: 'never' }));
    assert.deepEqual(none.transitions, []);
    // An edge with a closed interval and nothing after it: its dwell is the interval.
    await commitOk(s, { triplets: [triplet(['Person', 'Walt'], 'role', ['Role', 'Intern'], { valid_time: { start: '2001-01-01T00:00:00Z', end: '2001-07-01T00:00:00Z' } })] });
    const walt = ok(await postJson(s, '/v1/query/transitions', { entity: sel('Person', 'Walt'), relation: 'role' }));
    assert.equal(walt.transitions[0].dwell_micros, micros('2001-07-01T00:00:00Z') - micros('2001-01-01T00:00:00Z'));
    assert.equal(walt.is_state_relation, true);
  });
});

describe('entity reads', () => {
  const props = {
    age: 41, score: 2.5, active: true, nick: 'K', tags: ['x', 'y'], lucky: [3, 7],
    born: { date_time: '1985-02-03T04:05:06Z' }, bio: { text: 'Long text, with "quotes"\nand a newline' },
  };
  const expected = {
    age: 41, score: 2.5, active: true, nick: 'K', tags: ['x', 'y'], lucky: [3, 7],
    born: '1985-02-03T04:05:06.000Z', bio: 'Long text, with "quotes"\nand a newline',
  };
  let created = 0;

  test('by type+name and by id; attributes round-trip entity_properties as native JSON', async () => {
    created = await commitOk(s, {
      triplets: [
        triplet(['Person', 'Kim'], 'knows', ['Person', 'Lee']),
        triplet(['Person', 'Kim'], 'manages', ['Person', 'Mo']),
        triplet(['Person', 'Nia'], 'reports_to', ['Person', 'Kim']),
      ],
      entity_properties: [{ type: 'Person', name: 'Kim', properties: props }, { type: 'Person', name: 'Lee', properties: [{ field: 'Title', value: 'Dr' }] }],
    });
    const byName = ok(await getJson(s, '/v1/graph/entity?type=Person&name=Kim'));
    assert.equal(byName.entity.name, 'Kim');
    assert.equal(byName.entity.type, 'Person');
    assert.match(byName.entity.id, /^[0-9a-f]{32}$/);
    assert.deepEqual(byName.attributes, expected);
    const byId = ok(await getJson(s, `/v1/graph/entity?id=${byName.entity.id}`));
    assert.deepEqual(byId.entity, byName.entity);
    assert.deepEqual(byId.attributes, expected);
    assert.deepEqual(ok(await getJson(s, '/v1/graph/entity?type=Person&name=Lee')).attributes, { title: 'Dr' });
    assert.deepEqual(byName.current_state.map((e: Json) => `${e.relation.name}→${e.target.name}`).sort(), ['knows→Lee', 'manages→Mo']);
    assert.deepEqual(byName.incoming.map((e: Json) => `${e.source.name}→${e.relation.name}`), ['Nia→reports_to']);
    assert.equal(byName.snapshot.commit_seq, created);
    assert.equal(byName.snapshot.as_of_commit_seq, null);
    // The same values in SPARQL, typed.
    const kim = `<${BASE}e/${byName.entity.id}>`;
    const rows = await sparql(s, `SELECT ?v WHERE { ${kim} <${BASE}p/born> ?v FILTER(?v = "1985-02-03T04:05:06Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>) }`);
    assert.equal(rows.length, 1);
    assert.match(rows[0]!.v!, /\^\^<http:\/\/www\.w3\.org\/2001\/XMLSchema#dateTime>$/);
    const flags = await sparql(s, `SELECT ?v WHERE { ${kim} <${BASE}p/active> ?v }`);
    assert.deepEqual(flags, [{ v: '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>' }]);

    // merge (default): set fields change, others stay; remove_fields drops.
    const m = await commitOk(s, { entity_properties: [{ type: 'Person', name: 'Kim', properties: { age: 42 }, remove_fields: ['nick'] }] });
    const { nick: _nick, ...rest } = expected;
    assert.deepEqual(ok(await getJson(s, '/v1/graph/entity?type=Person&name=Kim')).attributes, { ...rest, age: 42 });
    // replace: the given fields become the whole set.
    await commitOk(s, { entity_properties: [{ type: 'Person', name: 'Kim', properties: { age: 43 } }], property_merge: 'replace' });
    assert.deepEqual(ok(await getJson(s, '/v1/graph/entity?type=Person&name=Kim')).attributes, { age: 43 });
    assert.deepEqual(ok(await getJson(s, `/v1/graph/entity?type=Person&name=Kim&as_of_commit_seq=${created}`)).attributes, expected);
    assert.deepEqual(ok(await getJson(s, `/v1/graph/entity?type=Person&name=Kim&as_of_commit_seq=${m}`)).attributes, { ...rest, age: 42 });
    // by entity_id in entity_properties.
    await commitOk(s, { entity_properties: [{ type: 'Person', name: 'ignored', entity_id: byName.entity.id, properties: { shoe: 44 } }] });
    assert.deepEqual(ok(await getJson(s, `/v1/graph/entity?id=${byName.entity.id}`)).attributes, { age: 43, shoe: 44 });
  });

  test('unknown entities are 404; a selector is required', async () => {
    for (const path of ['/v1/graph/entity?type=Person&name=Nobody', `/v1/graph/entity?id=${'0'.repeat(32)}`, '/v1/graph/entity/metadata?type=Person&name=Nobody', '/v1/graph/entity/neighborhood?type=Person&name=Nobody']) {
      await assertError(await s.fetch(path), 404, 'entity_not_found');
    }
    const res = await s.fetch('/v1/graph/entity');
    assert.equal(res.status, 400);
    await res.body?.cancel();
    const st = await postJson(s, '/v1/query/state', { entity: sel('Person', 'Nobody') });
    assert.equal(st.status, 404);
  });

  test('keyed entities: found by name and key-stable across renames', async () => {
    await commitOk(s, { triplets: [triplet(['Employee', 'Robin Smith'], 'member_of', ['Team', 'Core'], { source: { type: 'Employee', name: 'Robin Smith', key: 'emp-7' } })] });
    const a = ok(await getJson(s, '/v1/graph/entity?type=Employee&name=Robin%20Smith'));
    const meta = ok(await getJson(s, '/v1/graph/entity/metadata?type=Employee&name=Robin%20Smith'));
    assert.equal(meta.key, 'emp-7');
    await commitOk(s, { triplets: [{ source: { type: 'Employee', name: 'Robin Jones', key: 'emp-7' }, relation: 'member_of', target: { type: 'Team', name: 'Web' } }] });
    const b = ok(await getJson(s, '/v1/graph/entity?type=Employee&name=Robin%20Jones'));
    assert.equal(b.entity.id, a.entity.id, 'same key, same entity');
    assert.deepEqual(b.current_state.map((e: Json) => e.target.name).sort(), ['Core', 'Web']);
    const labels = await sparql(s, `SELECT ?l WHERE { <${BASE}e/${a.entity.id}> <${RDFS_LABEL}> ?l }`);
    assert.deepEqual(labels, [{ l: '"Robin Jones"' }]);
  });

  test('metadata and neighborhood', async () => {
    const meta = ok(await getJson(s, '/v1/graph/entity/metadata?type=Person&name=Kim'));
    assert.equal(meta.entity.name, 'Kim');
    assert.equal(meta.created_at_commit, created);
    assert.ok(meta.last_commit > created, 'property commits touched it later');
    assert.equal(meta.snapshot.commit_seq, await headSeq(s));
    const pinned = ok(await getJson(s, `/v1/graph/entity/metadata?type=Person&name=Kim&as_of_commit_seq=${created}`));
    assert.equal(pinned.last_commit, created);

    const hood = ok(await getJson(s, '/v1/graph/entity/neighborhood?type=Person&name=Kim'));
    assert.equal(hood.entity.name, 'Kim');
    assert.deepEqual(hood.outgoing.map((e: Json) => `${e.relation.name}→${e.peer.name}`).sort(), ['knows→Lee', 'manages→Mo']);
    assert.deepEqual(hood.incoming.map((e: Json) => `${e.relation.name}←${e.peer.name}`), ['reports_to←Nia']);
    assert.equal(hood.truncation, null);
    const knows = ok(await getJson(s, '/v1/graph/entity/neighborhood?type=Person&name=Kim&relations=knows'));
    assert.deepEqual(knows.outgoing.map((e: Json) => e.peer.name), ['Lee']);
    assert.deepEqual(knows.incoming, []);
    const one = ok(await getJson(s, '/v1/graph/entity/neighborhood?type=Person&name=Kim&edges=1'));
    assert.equal(one.outgoing.length, 1);
    assert.ok(one.truncation, 'truncation reported');
    assert.equal(one.truncation.outgoing.total_observed, 2);
  });

  test('entities/sample lists present entities of a type', async () => {
    const all = ok(await getJson(s, '/v1/graph/entities/sample?type=Person&limit=128'));
    assert.equal(all.entity_type, 'Person');
    const names = all.entities.map((e: Json) => e.entity.name);
    for (const n of ['Kim', 'Lee', 'Mo', 'Nia', 'Tina', 'Vik']) assert.ok(names.includes(n), n);
    assert.equal(all.total_count, names.length);
    assert.ok(!names.includes('Oldco'));
    for (const e of all.entities) {
      assert.equal(e.entity.type, 'Person');
      assert.match(e.entity.id, /^[0-9a-f]{32}$/);
    }
    // Rows carry the current degree: Kim knows Lee, manages Mo; Nia reports to Kim.
    const kim = all.entities.find((e: Json) => e.entity.name === 'Kim');
    assert.deepEqual([kim.out_degree, kim.in_degree], [2, 1]);
    const two = ok(await getJson(s, '/v1/graph/entities/sample?type=person&limit=2'));
    assert.equal(two.entities.length, 2);
    assert.equal(two.total_count, all.total_count);
    assert.equal(two.snapshot.commit_seq, await headSeq(s));
    const missing = await s.fetch('/v1/graph/entities/sample');
    await assertError(missing, 400, 'missing_parameter');
    const none = ok(await getJson(s, '/v1/graph/entities/sample?type=Unicorn'));
    assert.equal(none.total_count, 0);
  });
});

describe('changes, publication, metadata', () => {
  test('changes since a commit_seq, paged until the head', async () => {
    const since = await headSeq(s);
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) {
      seqs.push(await commitOk(s, { triplets: [triplet(['Log', `L${i}`], 'next', ['Log', `L${i + 1}`], { evidence: `step ${i}` })] }));
    }
    ok(await postJson(s, '/v1/graph/retract', { edges: [{ source: { type: 'Log', name: 'L0' }, relation: 'next', target: { type: 'Log', name: 'L1' } }] }));
    const head = await headSeq(s);
    assert.equal(head, since + 6);
    // One page.
    const all = ok(await getJson(s, `/v1/graph/changes?since=${since}`));
    assert.equal(all.from_commit_seq, since);
    assert.equal(all.to_commit_seq, head);
    assert.equal(all.next_since, head);
    assert.equal(all.truncated, false);
    assert.deepEqual(all.edge_events.map((e: Json) => [e.op, e.source, e.target, e.commit_seq]), [
      ...seqs.map((q, i) => ['assert', `L${i}`, `L${i + 1}`, q]),
      ['retract', 'L0', 'L1', head],
    ]);
    assert.deepEqual(all.observations.map((o: Json) => o.text), [0, 1, 2, 3, 4].map((i) => `step ${i}`));
    assert.deepEqual(all.entities.map((e: Json) => e.name).sort(), ['L0', 'L1', 'L2', 'L3', 'L4', 'L5']);
    // Small pages: every event exactly once, in order.
    const events: Json[] = [];
    let cursor = since;
    let pages = 0;
    for (;;) {
      const page = ok(await getJson(s, `/v1/graph/changes?since=${cursor}&limit=3`));
      pages++;
      assert.equal(page.from_commit_seq, cursor);
      assert.ok(page.to_commit_seq > cursor || page.edge_events.length === 0);
      events.push(...page.edge_events);
      assert.equal(page.next_since, page.to_commit_seq);
      cursor = page.next_since;
      if (!page.truncated) break;
      assert.ok(pages < 20);
    }
    assert.ok(pages > 1, 'paged');
    assert.equal(cursor, head);
    assert.deepEqual(events.map((e) => e.edge_event_id), all.edge_events.map((e: Json) => e.edge_event_id));
    // Caught up: an empty page at the head; past the head: 409 delta_unavailable.
    const empty = ok(await getJson(s, `/v1/graph/changes?since=${head}`));
    assert.deepEqual([empty.edge_events, empty.truncated, empty.to_commit_seq], [[], false, head]);
    await assertError(await s.fetch(`/v1/graph/changes?since=${head + 1}`), 409, 'delta_unavailable');
  });

  test('read-snapshot: served_at_seq reaches the head shortly after a write', async () => {
    const seq = await commitOk(s, { triplets: [triplet(['Person', 'Pub'], 'knows', ['Person', 'Lish'])] });
    let snap: Json = {};
    const deadline = Date.now() + 10_000;
    for (;;) {
      snap = ok(await getJson(s, '/v1/graph/read-snapshot'));
      assert.equal(snap.head_seq, seq);
      assert.ok(snap.snapshot.served_at_seq <= seq);
      assert.equal(snap.query_lag_commits, seq - snap.snapshot.served_at_seq);
      if (snap.snapshot.served_at_seq >= seq) break;
      assert.ok(Date.now() < deadline, `served_at_seq stuck at ${snap.snapshot.served_at_seq}`);
      await sleep(50);
    }
    assert.equal(snap.query_lag_commits, 0);
    assert.deepEqual(snap.snapshot.graph, { tenant_id: 'local', graph_id: 'main', branch_id: 'main' });
    const meta = ok(await getJson(s, '/v1/graph/metadata'));
    assert.deepEqual(meta.graph, { tenant_id: 'local', graph_id: 'main', branch_id: 'main' });
    assert.equal(meta.snapshot.commit_seq, seq);
    assert.equal(meta.head_generation, seq);
    assert.equal(meta.snapshot.served_at_seq, seq);
  });
});

describe('as-of reads replay the log', () => {
  /** Deterministic PRNG (mulberry32), so a failure names a reproducible sequence. */
  function rng(seed: number) {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  async function dump(params = ''): Promise<string[]> {
    const rows = await sparql(s, 'SELECT ?s ?p ?o WHERE { ?s ?p ?o }', params);
    return rows.map((r) => `${r.s} ${r.p} ${r.o}`).sort();
  }

  test('after a seeded mix of writes, every as_of_commit_seq read equals the head as it was at that commit', async () => {
    const random = rng(20260723);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const people = ['R0', 'R1', 'R2', 'R3', 'R4'];
    const things = ['T0', 'T1', 'T2'];
    const rels = ['knows', 'works_at', 'likes'];
    const intervals = [
      undefined,
      { start: '2000-01-01T00:00:00Z', end: '2005-01-01T00:00:00Z' },
      { start: '2004-01-01T00:00:00Z' },
      { start: '2010-01-01T00:00:00Z', end: '2012-01-01T00:00:00Z' },
    ];
    const target = (): [string, string] => (random() < 0.5 ? ['Replay', pick(people)] : ['Thing', pick(things)]);
    const known: Json[] = []; // edges written so far, so retractions mostly hit something
    const edge = () => {
      const [type, name] = target();
      const e = { source: { type: 'Replay', name: pick(people) }, relation: pick(rels), target: { type, name } };
      known.push(e);
      return e;
    };
    const recorded = new Map<number, { dump: string[]; states: string[][] }>();
    const states = async (extra: Json = {}) => {
      const out: string[][] = [];
      for (const p of people) {
        const r = await postJson(s, '/v1/query/state', { entity: sel('Replay', p), ...extra });
        out.push(r.status === 404 ? [] : (ok(r, 'state').state as Json[]).map((e) => `${e.relation.name}→${e.target.name}@${e.valid_time.start_micros}`).sort());
      }
      return out;
    };
    let deleted = false;
    for (let step = 0; step < 30; step++) {
      const before = await headSeq(s);
      const roll = step === 22 ? 1 : random(); // one whole-graph delete in the middle
      let op: string;
      if (roll < 0.45) {
        op = 'commit';
        const triplets = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
          const vt = pick(intervals);
          return { ...edge(), confidence: pick([1, 0.5, 0.9]), evidence: `step ${step}`, ...(vt ? { valid_time: vt } : {}) };
        });
        const props = random() < 0.4 ? [{ type: 'Replay', name: pick(people), properties: { n: step, tag: pick(['a', 'b']) }, ...(random() < 0.3 ? { remove_fields: ['m'] } : {}) }] : [];
        ok(await commit(s, { triplets, entity_properties: props, property_merge: random() < 0.2 ? 'replace' : 'merge' }), `step ${step} commit`);
      } else if (roll < 0.65) {
        op = 'retract edge';
        ok(await postJson(s, '/v1/graph/retract', { edges: [pick(known), pick(known)] }), `step ${step}`);
      } else if (roll < 0.75) {
        op = 'retract entity';
        ok(await postJson(s, '/v1/graph/retract', { entities: [{ type: 'Replay', name: pick(people) }], purge_entity_properties: random() < 0.5 }), `step ${step}`);
      } else if (roll < 0.87) {
        op = 'import';
        ok(await postNdjson(s, '/v1/graph/import?batch=1', [edge(), { type: 'Replay', name: pick(people), properties: { m: step } }, edge()]), `step ${step}`);
      } else if (roll < 0.97 || deleted) {
        op = 'reload';
        ok(await postNdjson(s, '/v1/graph/reload?confirm=main', [edge(), edge(), { type: 'Replay', name: pick(people), properties: { n: -step } }]), `step ${step}`);
      } else {
        op = 'delete';
        deleted = true;
        ok(await postJson(s, '/v1/graph/delete?confirm=main', ''), `step ${step}`);
      }
      const head = await headSeq(s);
      if (head === before) continue;
      const now = await dump();
      // The head replica holds exactly what SQLite (the export) says is live.
      assert.deepEqual(now, (await exportNt(s)).sort(), `step ${step} (${op}): head replica = SQLite`);
      recorded.set(head, { dump: now, states: await states() });
    }
    assert.ok(recorded.size >= 16, `${recorded.size} commits recorded`);
    // SQL-served reads at every commit; SPARQL (a store built per pin) at an even spread of them.
    const seqs = [...recorded.keys()];
    const sparqlAt = new Set(Array.from({ length: 8 }, (_, i) => seqs[Math.round((i * (seqs.length - 1)) / 7)]!));
    for (const [seq, want] of recorded) {
      const pin = `as_of_commit_seq=${seq}`;
      if (sparqlAt.has(seq)) assert.deepEqual(await dump(pin), want.dump, `SPARQL ${pin}`);
      assert.deepEqual((await exportNt(s, pin)).sort(), want.dump, `export ${pin}`);
      assert.deepEqual(await states({ as_of_commit_seq: seq }), want.states, `state ${pin}`);
    }
    // Valid time: SPARQL and state agree on every person's edges at instants inside and between the intervals.
    for (const t of ['2001-06-01T00:00:00Z', '2004-06-01T00:00:00Z', '2008-01-01T00:00:00Z', '2011-01-01T00:00:00Z']) {
      const viaState = (await states({ as_of_valid_time: t })).map((list) => list.map((x) => x.split('@')[0]).sort());
      const viaSparql: string[][] = [];
      for (const p of people) {
        const rows = await sparql(s, `SELECT ?r ?n WHERE { ?e <${RDFS_LABEL}> "${p}" . ?e a <${BASE}class/replay> . ?e ?r ?o . ?o <${RDFS_LABEL}> ?n FILTER(STRSTARTS(STR(?r), "${BASE}r/")) }`, `as_of_valid_time=${t}`);
        viaSparql.push(rows.map((r) => `${r.r!.slice(BASE.length + 3, -1)}→${JSON.parse(r.n!)}`).sort());
      }
      assert.deepEqual(viaSparql, viaState, `valid time ${t}`);
    }
  });
});
