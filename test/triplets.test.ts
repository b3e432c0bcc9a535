/**
 * Triplet writes, black-box: commit (+dry_run) → commit_seq → read-your-writes, the generic
 * schema's IRIs in SPARQL, validation, idempotency (replay, reuse, restart), retract (edges,
 * entities, purge) and as-of reads before it, NDJSON import, reload (+dry_run), graph
 * create/delete/list and the fixed scope, and the summary after triplet commits.
 *
 * Two servers: `s` accumulates ordinary writes; `r` is for the whole-graph operations
 * (reload, delete) that would wipe what the other tests wrote.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startStackd, removeDir, type Stackd } from './helpers/server.js';
import { assertError } from './helpers/http.js';
import {
  BASE, RDF_TYPE, RDFS_LABEL, cls, commit, commitOk, countAll, entityIri, exportNt, getJson, headSeq, ok,
  postJson, postNdjson, prop, rel, sparql, sparqlText, stateOf, triplet, type Json,
} from './helpers/triplets.js';

let s: Stackd;
let r: Stackd;

before(async () => {
  [s, r] = await Promise.all([startStackd(), startStackd()]);
});

after(async () => {
  await Promise.all([s?.stop(), r?.stop()]);
  for (const x of [s, r]) if (x) removeDir(x.dataDir);
});

const WORKS_AT = 'SELECT ?s ?o WHERE { ?s <https://littlebigbrain.com/r/works_at> ?o }';

describe('commit and read-your-writes', () => {
  test('commit → commit_seq → strong read with min_indexed_seq sees the write (/sparql and sparql-text)', async () => {
    const before = await headSeq(s);
    const res = await commit(s, {
      triplets: [triplet(['Person', 'Alice'], 'works_at', ['Company', 'Acme'], { confidence: 0.9, evidence: { text: 'Alice joined Acme', source_id: 'doc-1' } })],
    }, { key: 'ryw-1' });
    const b = ok(res, 'commit');
    assert.equal(b.commit_seq, before + 1);
    assert.equal(b.graph_created, true, 'the first write creates the graph');
    assert.equal(b.commit.commit_seq, b.commit_seq);
    assert.equal(b.replayed, false);
    assert.equal(b.commit.idempotent_replay, false);
    assert.equal(b.idempotency_key, 'ryw-1');
    assert.equal(b.visibility_token, b.commit.visibility_token);
    assert.equal(b.entities_written, 2);
    assert.equal(b.edges_written, 1);
    assert.equal(b.commit.edge_event_ids.length, 1);
    assert.equal(b.commit.observation_ids.length, 1);
    assert.equal(b.commit.entity_ids.length, 2);
    for (const id of b.commit.entity_ids) assert.match(id, /^[0-9a-f]{32}$/);
    const seq = b.commit_seq as number;

    const alice = await entityIri(s, 'Person', 'Alice');
    const acme = await entityIri(s, 'Company', 'Acme');
    const rows = await sparql(s, WORKS_AT, `consistency=strong&min_indexed_seq=${seq}`);
    assert.deepEqual(rows, [{ s: alice, o: acme }]);
    const text = await sparqlText(s, WORKS_AT, `consistency=strong&min_indexed_seq=${seq}`);
    assert.deepEqual(text.rows, [{ s: alice, o: acme }]);
    assert.ok(text.body.snapshot.commit_seq >= seq);
    // eventual (the default) with the floor is served too: the head is always current.
    assert.equal((await sparql(s, WORKS_AT, `min_indexed_seq=${seq}`)).length, 1);
  });

  test('min_indexed_seq past the head: 429 read_your_writes_pending, retryable, Retry-After', async () => {
    const head = await headSeq(s);
    for (const path of [
      `/sparql?query=${encodeURIComponent(WORKS_AT)}&consistency=strong&min_indexed_seq=${head + 1}`,
      `/sparql?query=${encodeURIComponent(WORKS_AT)}&min_indexed_seq=${head + 100}`,
    ]) {
      const res = await s.fetch(path, { headers: { accept: 'application/sparql-results+json' } });
      const retryAfter = res.headers.get('retry-after');
      const e = await assertError(res, 429, 'read_your_writes_pending', 'rate_limit_error');
      assert.equal(e.retryable, true);
      assert.ok(Number(retryAfter) >= 1, `Retry-After: ${retryAfter}`);
      assert.equal(e.retry_after_seconds, Number(retryAfter));
      assert.equal(e.param, 'min_indexed_seq');
    }
    const res = await s.fetch(`/v1/query/sparql-text?consistency=strong&min_indexed_seq=${head + 1}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: WORKS_AT }),
    });
    assert.ok(res.headers.get('retry-after'));
    const e = await assertError(res, 429, 'read_your_writes_pending', 'rate_limit_error');
    assert.equal(e.retryable, true);
    assert.equal(await headSeq(s), head, 'a refused read writes nothing');
  });

  test('SPARQL written for the hosted plane runs unchanged over committed triplets', async () => {
    const second = ok(await commit(s, {
      triplets: [triplet(['Person', 'Bruno'], 'Works_At', ['Company', 'Acme'])],
      entity_properties: [{ type: 'Company', name: 'Acme', properties: { founded: 1999, ticker: 'ACM' } }],
    }));
    assert.equal(second.graph_created, false);
    const acmeRows = await sparql(s, 'PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> SELECT ?e WHERE { ?e rdfs:label "Acme" }');
    const acme = await entityIri(s, 'Company', 'Acme');
    assert.deepEqual(acmeRows, [{ e: acme }]);
    assert.ok(acme.startsWith(`<${BASE}e/`) && /^<https:\/\/littlebigbrain\.com\/e\/[0-9a-f]{32}>$/.test(acme));
    // Relation names are lower-cased: "Works_At" is the same predicate as "works_at".
    const who = await sparql(s, `PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
      SELECT ?name WHERE { ?p <https://littlebigbrain.com/r/works_at> ?c . ?c rdfs:label "Acme" . ?p rdfs:label ?name } ORDER BY ?name`);
    assert.deepEqual(who.map((x) => x.name), ['"Alice"', '"Bruno"']);
    // Classes and properties.
    const typed = await sparql(s, `SELECT ?t WHERE { ${acme} <${RDF_TYPE}> ?t }`);
    assert.deepEqual(typed, [{ t: cls('company') }]);
    const props = await sparql(s, `SELECT ?p ?v WHERE { ${acme} ?p ?v FILTER(STRSTARTS(STR(?p), "${BASE}p/")) } ORDER BY ?p`);
    assert.deepEqual(props, [
      { p: prop('founded'), v: '"1999"^^<http://www.w3.org/2001/XMLSchema#integer>' },
      { p: prop('ticker'), v: '"ACM"' },
    ]);
    // Field names are canonical (trimmed, lower-cased) in reads; only the IRI is percent-encoded, once.
    const w = ok(await commit(s, { entity_properties: [{ type: 'Person', name: 'Bruno', properties: { 'First Name': 'Bru', ' Größe ': 180 } }] }));
    assert.deepEqual(w.written_properties, [{ type: 'Person', name: 'Bruno', fields: ['first name', 'größe'], removed_fields: [] }]);
    const bruno = await entityIri(s, 'Person', 'Bruno');
    const brunoProps = async () => (await sparql(s, `SELECT ?p ?v WHERE { ${bruno} ?p ?v FILTER(STRSTARTS(STR(?p), "${BASE}p/")) } ORDER BY ?p`)).map((x) => `${x.p} ${x.v}`);
    assert.deepEqual(await brunoProps(), [`<${BASE}p/first%20name> "Bru"`, `<${BASE}p/gr%C3%B6%C3%9Fe> "180"^^<http://www.w3.org/2001/XMLSchema#integer>`]);
    ok(await commit(s, { entity_properties: [{ type: 'Person', name: 'Bruno', properties: { 'first name': 'Bruno' }, remove_fields: ['GRÖSSE', 'Größe'] }] }));
    assert.deepEqual(ok(await getJson(s, '/v1/graph/entity?type=Person&name=Bruno')).attributes, { 'first name': 'Bruno' });
    assert.deepEqual(await brunoProps(), [`<${BASE}p/first%20name> "Bruno"`], 'the old values left SPARQL');
    const people = await sparql(s, `SELECT (COUNT(?p) AS ?n) WHERE { ?p a <${BASE}class/person> }`);
    assert.equal(people[0]!.n, '"2"^^<http://www.w3.org/2001/XMLSchema#integer>');
    // A surrogate pair written as JSON escapes is ordinary text.
    ok(await commit(s, '{"triplets":[{"source":{"type":"Emoji","name":"smile \\ud83d\\ude00"},"relation":"is","target":{"type":"Mood","name":"happy"}}]}'));
    assert.equal((await sparql(s, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "smile \u{1F600}" }`)).length, 1);
  });

  test('an unchanged re-commit is a no-op: no new commit_seq, the edge is reported skipped', async () => {
    const head = await headSeq(s);
    const b = ok(await commit(s, { triplets: [triplet(['Person', 'Bruno'], 'works_at', ['Company', 'Acme'])] }));
    assert.equal(b.no_op, true);
    assert.equal(b.commit_seq, head);
    assert.equal(b.commit.skipped_edges.length, 1);
    assert.equal(await headSeq(s), head);
  });
});

describe('dry run and validation write nothing', () => {
  test('?dry_run=true reports the would-be effect and writes nothing', async () => {
    const head = await headSeq(s);
    const total = await countAll(s);
    const file = {
      triplets: [triplet(['Person', 'Dora'], 'works_at', ['Company', 'Dryco'], { confidence: 0.5 })],
      entity_properties: [{ type: 'Person', name: 'Dora', properties: { age: 33 } }],
    };
    const b = ok(await commit(s, file, { query: 'dry_run=true', key: 'dry-key' }), 'dry run');
    assert.equal(b.dry_run, true);
    assert.equal(b.would_commit_seq, head + 1);
    assert.equal(b.entities_written, 2);
    assert.equal(b.edges_written, 1);
    assert.equal(b.entities_created, 2);
    // type + label for 2 entities, the edge, one property statement.
    assert.equal(b.statements_added, 6);
    assert.equal(b.statements_removed, 0);
    assert.deepEqual(b.written_properties, [{ type: 'Person', name: 'Dora', fields: ['age'], removed_fields: [] }]);
    assert.equal(await headSeq(s), head, 'head unchanged');
    assert.equal(await countAll(s), total, 'SPARQL unchanged');
    assert.deepEqual(await sparql(s, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "Dora" }`), []);
    const missing = await getJson(s, '/v1/graph/entity?type=Person&name=Dora');
    assert.equal(missing.status, 404);
    // The dry run did not use up its key: the real commit with it is fresh, then replays.
    const real = ok(await commit(s, file, { key: 'dry-key' }));
    assert.equal(real.replayed, false);
    assert.equal(real.commit_seq, head + 1);
    const dry2 = ok(await commit(s, file, { query: 'dry_run=true' }));
    assert.equal(dry2.no_op, true, 'a dry run of what is already there would change nothing');
    assert.equal(dry2.would_commit_seq, null);
  });

  test('invalid commits are typed 400/415 errors and write nothing', async () => {
    const head = await headSeq(s);
    const total = await countAll(s);
    const good = triplet(['Person', 'Val'], 'knows', ['Person', 'Idation']);
    const cases: [unknown, string, string | null][] = [
      [{ triplets: [{ relation: 'knows', target: { type: 'Person', name: 'X' } }] }, 'missing_field', 'triplets[0].source'],
      [{ triplets: [{ source: { type: 'Person' }, relation: 'knows', target: { type: 'Person', name: 'X' } }] }, 'missing_field', 'triplets[0].source.name'],
      [{ triplets: [{ source: { type: 'Person', name: 'V' }, target: { type: 'Person', name: 'X' } }] }, 'missing_field', 'triplets[0].relation'],
      [{ triplets: [{ ...good, confidence: 1.5 }] }, 'invalid_field', 'triplets[0].confidence'],
      [{ triplets: [{ ...good, confidence: -0.1 }] }, 'invalid_field', 'triplets[0].confidence'],
      [{ triplets: [{ ...good, confidence: 'high' }] }, 'invalid_field', 'triplets[0].confidence'],
      [{ triplets: [good], colour: 'red' }, 'unknown_field', 'body.colour'],
      [{ triplets: [{ ...good, weight: 3 }] }, 'unknown_field', 'triplets[0].weight'],
      [{ triplets: [{ ...good, source: { type: 'Person', name: 'V', age: 3 } }] }, 'unknown_field', 'triplets[0].source.age'],
      [{}, 'empty_commit', 'triplets'],
      [{ triplets: [], entity_properties: [] }, 'empty_commit', 'triplets'],
      [{ triplets: [{ ...good, valid_time: { start: 'yesterday' } }] }, 'invalid_timestamp', 'triplets[0].valid_time.start'],
      [{ triplets: [{ ...good, valid_time: { start: '2021-02-30T00:00:00Z' } }] }, 'invalid_timestamp', 'triplets[0].valid_time.start'],
      [{ triplets: [{ ...good, valid_time: { start: '2022-01-01T00:00:00Z', end: '2021-01-01T00:00:00Z' } }] }, 'invalid_field', 'triplets[0].valid_time.end'],
      [{ triplets: [good], observed_at: '2020-13-45' }, 'invalid_timestamp', 'observed_at'],
      [{ triplets: 'all of them' }, 'invalid_field', 'triplets'],
      [{ entity_properties: [{ type: 'Person', name: 'V', properties: { age: { i64: 1.5 } } }] }, 'invalid_field', 'entity_properties[0].properties.age.i64'],
      // An unpaired surrogate escape is not text (SQLite would keep U+FFFDs the head never had).
      [{ triplets: [triplet(['Person', 'Half\ud800'], 'knows', ['Person', 'Idation'])] }, 'invalid_encoding', 'body'],
      [{ entity_properties: [{ type: 'Person', name: 'V', properties: { note: 'x\udc00y' } }] }, 'invalid_encoding', 'body'],
    ];
    for (const [body, code, param] of cases) {
      const res = await s.fetch('/v1/graph/commit', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const e = await assertError(res, 400, code);
      assert.equal(e.param, param, `param for ${JSON.stringify(body)}: ${e.message}`);
      assert.equal(e.retryable, false);
    }
    // A bad triplet after good ones: the whole commit is refused.
    const mixed = await s.fetch('/v1/graph/commit', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ triplets: [good, { ...good, confidence: 2 }] }),
    });
    await assertError(mixed, 400, 'invalid_field');
    for (const body of ['{"triplets": [', 'null', '[1,2]', '']) {
      const res = await s.fetch('/v1/graph/commit', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await assertError(res, 400, 'invalid_json');
    }
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/x-ndjson']) {
      const res = await s.fetch('/v1/graph/commit', { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify({ triplets: [good] }) });
      const e = await assertError(res, 415, 'unsupported_media_type');
      assert.equal(e.param, 'Content-Type');
    }
    const dryBad = await s.fetch('/v1/graph/commit?dry_run=true', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await assertError(dryBad, 400, 'empty_commit');
    const unknownParam = await s.fetch('/v1/graph/commit?dryrun=true', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ triplets: [good] }) });
    assert.equal(unknownParam.status, 400);
    await unknownParam.body?.cancel();
    assert.equal(await headSeq(s), head, 'nothing was committed');
    assert.equal(await countAll(s), total, 'SPARQL unchanged');
    assert.deepEqual(await sparql(s, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "Val" }`), []);
  });
});

describe('idempotency keys', () => {
  test('commit: same key + same body replays; same key + other body is 409; nothing new is written', async () => {
    const file = { triplets: [triplet(['Person', 'Ida'], 'works_at', ['Company', 'Keyco'], { evidence: 'badge' })] };
    const first = ok(await commit(s, file, { key: 'idem-commit' }));
    const head = await headSeq(s);
    assert.equal(first.commit_seq, head);
    // Same content, keys reordered: still the same request.
    const reordered = { triplets: [{ evidence: 'badge', target: { name: 'Keyco', type: 'Company' }, relation: 'works_at', source: { name: 'Ida', type: 'Person' } }] };
    for (const again of [file, reordered]) {
      const b = ok(await commit(s, again, { key: 'idem-commit' }));
      assert.equal(b.replayed, true);
      assert.equal(b.commit.idempotent_replay, true);
      assert.equal(b.commit_seq, first.commit_seq);
      assert.deepEqual(b.commit.edge_event_ids, first.commit.edge_event_ids);
    }
    assert.equal(await headSeq(s), head, 'a replay writes nothing');
    // Same key, other content — a different target, or only a different confidence.
    for (const other of [
      { triplets: [triplet(['Person', 'Ida'], 'works_at', ['Company', 'Otherco'], { evidence: 'badge' })] },
      { triplets: [triplet(['Person', 'Ida'], 'works_at', ['Company', 'Keyco'], { evidence: 'badge', confidence: 0.5 })] },
      { triplets: [triplet(['Person', 'Ida'], 'works_at', ['Company', 'Keyco'], { evidence: 'other badge' })] },
    ]) {
      const res = await s.fetch('/v1/graph/commit', {
        method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'idem-commit' }, body: JSON.stringify(other),
      });
      const e = await assertError(res, 409, 'idempotency_key_reused');
      assert.equal(e.retryable, false);
    }
    assert.equal(await headSeq(s), head);
    assert.deepEqual(await sparql(s, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "Otherco" }`), []);
    // A key used on one route is not reusable on another.
    const res = await postJson(s, '/v1/graph/retract', { edges: [{ source: { type: 'Person', name: 'Ida' }, relation: 'works_at', target: { type: 'Company', name: 'Keyco' } }] }, { 'idempotency-key': 'idem-commit' });
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'idempotency_key_reused');
    assert.equal((await stateOf(s, 'Person', 'Ida')).length, 1, 'the refused retract did nothing');
  });

  test('retract and import: same key + same body replays; other body is 409', async () => {
    ok(await commit(s, { triplets: [triplet(['Person', 'Rex'], 'owns', ['Car', 'Beetle']), triplet(['Person', 'Rex'], 'owns', ['Car', 'Mini'])] }));
    const edge = (car: string) => ({ source: { type: 'Person', name: 'Rex' }, relation: 'owns', target: { type: 'Car', name: car } });
    const first = ok(await postJson(s, '/v1/graph/retract', { edges: [edge('Beetle')] }, { 'idempotency-key': 'idem-retract' }));
    assert.equal(first.retracted_edges, 1);
    assert.equal(first.idempotent_replay, false);
    const head = await headSeq(s);
    const again = ok(await postJson(s, '/v1/graph/retract', { edges: [edge('Beetle')] }, { 'idempotency-key': 'idem-retract' }));
    assert.equal(again.idempotent_replay, true);
    assert.equal(again.commit_seq, first.commit_seq);
    assert.equal(again.retracted_edges, 0, 'counts are zero on a replay');
    const other = await postJson(s, '/v1/graph/retract', { edges: [edge('Mini')] }, { 'idempotency-key': 'idem-retract' });
    assert.equal(other.status, 409, JSON.stringify(other.body));
    assert.equal(other.body.error.code, 'idempotency_key_reused');
    assert.deepEqual(await stateOf(s, 'Person', 'Rex'), ['owns→Mini']);
    assert.equal(await headSeq(s), head);

    const lines = [triplet(['Person', 'Imp'], 'knows', ['Person', 'Ort']), { type: 'Person', name: 'Imp', properties: { shoe: 42 } }];
    const imp = ok(await postNdjson(s, '/v1/graph/import', lines, { 'idempotency-key': 'idem-import' }));
    assert.equal(imp.idempotent_replay, false);
    assert.equal(imp.idempotency_key, 'idem-import');
    const head2 = await headSeq(s);
    assert.equal(imp.committed_commit_seq, head2);
    const imp2 = ok(await postNdjson(s, '/v1/graph/import', lines, { 'idempotency-key': 'idem-import' }));
    assert.equal(imp2.idempotent_replay, true);
    assert.equal(imp2.committed_commit_seq, imp.committed_commit_seq);
    assert.equal(imp2.mutation_receipt_id, imp.mutation_receipt_id);
    const imp3 = await postNdjson(s, '/v1/graph/import', [triplet(['Person', 'Imp'], 'knows', ['Person', 'Else'])], { 'idempotency-key': 'idem-import' });
    assert.equal(imp3.status, 409);
    assert.equal(imp3.body.error.code, 'idempotency_key_reused');
    const imp4 = await postNdjson(s, '/v1/graph/import?batch=7', lines, { 'idempotency-key': 'idem-import' });
    assert.equal(imp4.status, 409, 'other parameters are other content');
    assert.equal(await headSeq(s), head2);
    assert.deepEqual(await sparql(s, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "Else" }`), []);
  });

  test('an invalid Idempotency-Key is refused', async () => {
    const res = await s.fetch('/v1/graph/commit', {
      method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'x'.repeat(300) },
      body: JSON.stringify({ triplets: [triplet(['Person', 'Long'], 'knows', ['Person', 'Key'])] }),
    });
    await assertError(res, 400, 'invalid_idempotency_key');
  });
});

describe('retract', () => {
  test('a retracted edge leaves current reads and stays visible as of the commit before', async () => {
    const added = await commitOk(s, { triplets: [triplet(['Person', 'Rita'], 'works_at', ['Company', 'Retco'], { evidence: 'contract' }), triplet(['Person', 'Rita'], 'likes', ['Food', 'Pie'])] });
    const rita = await entityIri(s, 'Person', 'Rita');
    const retco = await entityIri(s, 'Company', 'Retco');
    const q = `SELECT ?o WHERE { ${rita} <${BASE}r/works_at> ?o }`;
    assert.deepEqual(await sparql(s, q), [{ o: retco }]);
    const b = ok(await postJson(s, '/v1/graph/retract', { edges: [{ source: { type: 'Person', name: 'Rita' }, relation: 'Works_At', target: { type: 'Company', name: 'Retco' } }] }));
    assert.equal(b.retracted_edges, 1);
    assert.equal(b.retracted_entities, 0);
    assert.equal(b.no_op, false);
    assert.equal(b.idempotent_replay, false);
    assert.equal(b.commit_seq, added + 1);
    assert.equal(b.edge_event_ids.length, 1);
    assert.equal(typeof b.visibility_token, 'string');
    const gone = b.commit_seq as number;

    // Current reads: SPARQL, sparql-text, export, state, entity.
    assert.deepEqual(await sparql(s, q, `consistency=strong&min_indexed_seq=${gone}`), []);
    assert.deepEqual((await sparqlText(s, q)).rows, []);
    const edgeLine = `${rita} ${rel('works_at')} ${retco}`;
    assert.ok(!(await exportNt(s)).includes(edgeLine));
    assert.deepEqual(await stateOf(s, 'Person', 'Rita'), ['likes→Pie']);
    const detail = ok(await getJson(s, '/v1/graph/entity?type=Person&name=Rita'));
    assert.deepEqual(detail.current_state.map((e: Json) => e.target.name), ['Pie']);
    assert.deepEqual(detail.outgoing.map((e: Json) => e.target.name), ['Pie']);
    // The entity itself is still there (retracting an edge leaves its endpoints).
    assert.equal((await sparql(s, `SELECT ?l WHERE { ${retco} <${RDFS_LABEL}> ?l }`)).length, 1);

    // As of the commit before the retraction: everywhere.
    assert.deepEqual(await sparql(s, q, `as_of_commit_seq=${added}`), [{ o: retco }]);
    assert.deepEqual(await sparql(s, q, `as_of_commit_seq=${gone - 1}`), [{ o: retco }]);
    assert.deepEqual(await sparql(s, q, `as_of_commit_seq=${gone}`), []);
    const pinned = await sparqlText(s, q, `as_of_commit_seq=${added}`);
    assert.deepEqual(pinned.rows, [{ o: retco }]);
    assert.equal(pinned.body.snapshot.as_of_commit_seq, added);
    assert.ok((await exportNt(s, `as_of_commit_seq=${added}`)).includes(edgeLine));
    assert.deepEqual(await stateOf(s, 'Person', 'Rita', { as_of_commit_seq: added }), ['likes→Pie', 'works_at→Retco']);
    assert.deepEqual(await stateOf(s, 'Person', 'Rita', { as_of_commit_seq: added - 1 }), [], 'before the edge was committed');
    const then = ok(await getJson(s, `/v1/graph/entity?type=Person&name=Rita&as_of_commit_seq=${added}`));
    assert.deepEqual(then.current_state.map((e: Json) => e.target.name).sort(), ['Pie', 'Retco']);
    assert.equal(then.snapshot.as_of_commit_seq, added);
    // POST /sparql (form) honours the pin as well.
    const form = await s.fetch('/sparql', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
      body: `query=${encodeURIComponent(q)}&as_of_commit_seq=${added}`,
    });
    assert.equal(form.status, 200);
    assert.equal(((await form.json()) as Json).results.bindings.length, 1);
  });

  test('retracting what is not current is a no_op that writes nothing', async () => {
    const head = await headSeq(s);
    for (const body of [
      { edges: [{ source: { type: 'Person', name: 'Rita' }, relation: 'works_at', target: { type: 'Company', name: 'Retco' } }] },
      { edges: [{ source: { type: 'Person', name: 'Nobody' }, relation: 'knows', target: { type: 'Person', name: 'Noone' } }] },
      { entities: [{ type: 'Person', name: 'Nobody' }] },
    ]) {
      const b = ok(await postJson(s, '/v1/graph/retract', body));
      assert.equal(b.no_op, true, JSON.stringify(body));
      assert.equal(b.retracted_edges, 0);
      assert.equal(b.retracted_entities, 0);
      assert.deepEqual(b.edge_event_ids, []);
      assert.equal(b.commit_seq, head);
    }
    assert.equal(await headSeq(s), head);
    const bad = await s.fetch('/v1/graph/retract', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await assertError(bad, 400, 'empty_retract');
    const bad2 = await s.fetch('/v1/graph/retract', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ edges: [{ source: { type: 'Person', name: 'A' }, target: { type: 'Person', name: 'B' } }] }) });
    await assertError(bad2, 400, 'invalid_field');
    const bad3 = await s.fetch('/v1/graph/retract', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ entities: [{ type: 'Person', name: 'A' }], purge: true }) });
    await assertError(bad3, 400, 'unknown_field');
    assert.equal(await headSeq(s), head);
  });

  test('retracting entities: every edge touching them; with purge_entity_properties they leave SPARQL entirely', async () => {
    const added = await commitOk(s, {
      triplets: [
        triplet(['Doc', 'Chunk-1'], 'mentions', ['Person', 'Pat']),
        triplet(['Person', 'Quin'], 'cites', ['Doc', 'Chunk-1']),
        triplet(['Doc', 'Chunk-2'], 'mentions', ['Person', 'Pat']),
      ],
      entity_properties: [
        { type: 'Doc', name: 'Chunk-1', properties: { acl: ['team-a', 'team-b'], text: { text: 'hello world' } } },
        { type: 'Doc', name: 'Chunk-2', properties: { acl: ['team-a'] } },
      ],
    });
    const c1 = await entityIri(s, 'Doc', 'Chunk-1');
    const c2 = await entityIri(s, 'Doc', 'Chunk-2');
    const about = (iri: string) => `SELECT ?p ?o WHERE { { ${iri} ?p ?o } UNION { ?o ?p ${iri} } }`;
    assert.equal((await sparql(s, about(c1))).length, 2 + 3 + 2, 'type, label, 3 property values, 2 edges');

    // Without purge: edges go, properties (and presence) stay.
    const plain = ok(await postJson(s, '/v1/graph/retract', { entities: [{ type: 'Doc', name: 'Chunk-2' }] }));
    assert.equal(plain.retracted_edges, 1);
    assert.equal(plain.retracted_entities, 1);
    assert.equal(plain.purged_entities, 0);
    assert.deepEqual((await sparql(s, about(c2))).map((x) => x.p).sort(), [prop('acl'), RDFS_LABEL, RDF_TYPE].map((p) => (p.startsWith('<') ? p : `<${p}>`)).sort());
    assert.deepEqual(ok(await getJson(s, '/v1/graph/entity?type=Doc&name=Chunk-2')).attributes, { acl: ['team-a'] });

    const purged = ok(await postJson(s, '/v1/graph/retract', { entities: [{ type: 'Doc', name: 'Chunk-1' }], purge_entity_properties: true }));
    assert.equal(purged.retracted_edges, 2);
    assert.equal(purged.retracted_entities, 1);
    assert.equal(purged.purged_entities, 1);
    assert.equal(purged.edge_event_ids.length, 2);
    assert.deepEqual(await sparql(s, about(c1)), [], 'no statement about the purged entity: no type, no label, no property, no edge');
    assert.deepEqual(await sparql(s, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "Chunk-1" }`), []);
    assert.deepEqual(await stateOf(s, 'Doc', 'Chunk-1'), []);
    assert.deepEqual(await stateOf(s, 'Person', 'Quin'), []);
    const detail = ok(await getJson(s, '/v1/graph/entity?type=Doc&name=Chunk-1'));
    assert.deepEqual(detail.attributes, {});
    assert.deepEqual(detail.incoming, []);
    const sample = ok(await getJson(s, '/v1/graph/entities/sample?type=Doc'));
    assert.deepEqual(sample.entities.map((e: Json) => [e.entity.name, e.out_degree, e.in_degree]), [['Chunk-2', 0, 0]]);
    // As of before: all of it.
    assert.equal((await sparql(s, about(c1), `as_of_commit_seq=${added}`)).length, 7);
    assert.deepEqual(ok(await getJson(s, `/v1/graph/entity?type=Doc&name=Chunk-1&as_of_commit_seq=${added}`)).attributes, { acl: ['team-a', 'team-b'], text: 'hello world' });
    // A later commit brings it back.
    ok(await commit(s, { entity_properties: [{ type: 'Doc', name: 'Chunk-1', properties: { acl: ['team-c'] } }] }));
    assert.equal((await sparql(s, about(c1))).length, 3);
  });
});

describe('NDJSON import', () => {
  test('triplet and entity lines; batch sets the number of commits', async () => {
    const head = await headSeq(s);
    const lines = [
      triplet(['Person', 'Nia'], 'knows', ['Person', 'Omar'], { confidence: 0.7 }),
      { type: 'Person', name: 'Nia', properties: { height: 170 } },
      triplet(['Person', 'Omar'], 'knows', ['Person', 'Pia']),
      { type: 'Person', name: 'Pia', properties: { city: 'Oslo' } },
      triplet(['Person', 'Pia'], 'knows', ['Person', 'Nia']),
    ];
    const b = ok(await postNdjson(s, '/v1/graph/import?batch=2', lines));
    assert.equal(b.lines_read, 5);
    assert.equal(b.triplets, 3);
    assert.equal(b.properties, 2);
    assert.equal(b.batches, 3);
    assert.equal(b.error_count, 0);
    assert.deepEqual(b.errors, []);
    assert.equal(b.committed_commit_seq, head + 3);
    assert.equal(b.idempotent_replay, false);
    assert.match(b.idempotency_key, /\S/);
    assert.match(b.mutation_receipt_id, /\S/);
    assert.equal(await headSeq(s), head + 3);
    const knows = await sparql(s, `SELECT ?a ?b WHERE { ?x <${BASE}r/knows> ?y . ?x <${RDFS_LABEL}> ?a . ?y <${RDFS_LABEL}> ?b FILTER(?a IN ("Nia", "Omar", "Pia")) }`);
    assert.deepEqual(knows.map((x) => `${x.a}->${x.b}`).sort(), ['"Nia"->"Omar"', '"Omar"->"Pia"', '"Pia"->"Nia"']);
    assert.deepEqual(ok(await getJson(s, '/v1/graph/entity?type=Person&name=Pia')).attributes, { city: 'Oslo' });
    const all = ok(await postNdjson(s, '/v1/graph/import', [triplet(['Person', 'Nia'], 'knows', ['Person', 'Quincy'])]));
    assert.equal(all.batches, 1, 'the default batch holds a small import in one commit');
  });

  test('strict=false reports bad lines by number and imports the rest; strict=true writes nothing', async () => {
    const lines = [
      triplet(['Person', 'Lin'], 'knows', ['Person', 'Mo']),
      '{not json',
      '',
      { source: { type: 'Person', name: 'Lin' }, relation: 'knows' },
      '[1, 2]',
      triplet(['Person', 'Lin'], 'knows', ['Person', 'Ned'], { confidence: 3 }),
      { type: 'Person', name: 'Lin', properties: { age: 30 } },
    ];
    const head = await headSeq(s);
    const strict = await postNdjson(s, '/v1/graph/import?strict=true', lines);
    assert.equal(strict.status, 400, JSON.stringify(strict.body));
    assert.equal(strict.body.error.code, 'invalid_ndjson_line');
    assert.match(strict.body.error.message, /line 2/);
    assert.equal(await headSeq(s), head, 'strict: nothing written');
    assert.deepEqual(await sparql(s, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "Lin" }`), []);

    const b = ok(await postNdjson(s, '/v1/graph/import?strict=false', lines));
    assert.equal(b.lines_read, 7);
    assert.equal(b.error_count, 4);
    assert.deepEqual(b.errors.map((e: Json) => e.line), [2, 4, 5, 6]);
    for (const e of b.errors) assert.ok(typeof e.message === 'string' && e.message.length > 0);
    assert.equal(b.triplets, 1);
    assert.equal(b.properties, 1);
    assert.equal(b.batches, 1);
    assert.deepEqual(await stateOf(s, 'Person', 'Lin'), ['knows→Mo']);
    assert.deepEqual(ok(await getJson(s, '/v1/graph/entity?type=Person&name=Lin')).attributes, { age: 30 });
  });

  test('import request errors', async () => {
    const head = await headSeq(s);
    const res = await s.fetch('/v1/graph/import', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<x/>' });
    await assertError(res, 415, 'unsupported_media_type');
    const bad = await s.fetch('/v1/graph/import?observed_at=soon', { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '{}' });
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    assert.equal(await headSeq(s), head);
  });
});

describe('reload', () => {
  test('confirm must equal the graph name', async () => {
    const head = await headSeq(r);
    for (const q of ['', '?confirm=', '?confirm=other', '?confirm=MAIN']) {
      const res = await r.fetch('/v1/graph/reload' + q, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '' });
      const e = await assertError(res, 400, 'confirmation_required');
      assert.equal(e.param, 'confirm');
    }
    assert.equal(await headSeq(r), head);
  });

  test('dry_run reports exactly what the reload then does; absent entities leave current state but stay visible as of prior_commit_seq', async () => {
    ok(await commit(r, {
      triplets: [
        triplet(['Person', 'Ann'], 'knows', ['Person', 'Ben']),
        triplet(['Person', 'Cal'], 'knows', ['Person', 'Dee']),
        triplet(['Person', 'Ann'], 'knows', ['Person', 'Cal']),
      ],
      entity_properties: [
        { type: 'Person', name: 'Ann', properties: { age: 1, nick: 'A' } },
        { type: 'Thing', name: 'Eek', properties: { size: 3 } },
      ],
    }));
    const prior = await headSeq(r);
    const total = await countAll(r);
    const payload = [
      triplet(['Person', 'Ann'], 'knows', ['Person', 'Ben']),
      triplet(['Person', 'Ann'], 'likes', ['Food', 'Fig']),
      { type: 'Person', name: 'Ann', properties: { age: 2 } },
    ];
    const expected = {
      entities_added: 1, // Fig
      entities_removed: 3, // Cal, Dee, Eek
      entities_changed: 2, // Ann, Ben
      edges_added: 1, // Ann likes Fig
      edges_removed: 2, // Cal knows Dee, Ann knows Cal
      edges_changed: 1, // Ann knows Ben
      error_count: 0,
      lines_read: 3,
    };
    const dry = ok(await postNdjson(r, '/v1/graph/reload?confirm=main&dry_run=true', payload, { 'idempotency-key': 'reload-1' }));
    assert.equal(dry.dry_run, true);
    for (const [k, v] of Object.entries(expected)) assert.equal(dry[k], v, `dry ${k}`);
    assert.equal(dry.prior_commit_seq, prior);
    assert.equal(dry.new_commit_seq, prior + 1);
    assert.equal(await headSeq(r), prior, 'the dry run wrote nothing');
    assert.equal(await countAll(r), total);
    assert.deepEqual(await stateOf(r, 'Person', 'Cal'), ['knows→Dee']);
    assert.deepEqual(ok(await getJson(r, '/v1/graph/entity?type=Person&name=Ann')).attributes, { age: 1, nick: 'A' });

    const real = ok(await postNdjson(r, '/v1/graph/reload?confirm=main', payload, { 'idempotency-key': 'reload-1' }));
    assert.equal(real.dry_run, false);
    assert.equal(real.idempotent_replay, false);
    const counts = (b: Json) => {
      const { dry_run: _d, idempotency_key: _k, ...rest } = b;
      return rest;
    };
    assert.deepEqual(counts(real), counts(dry), 'the dry run reported exactly what the reload did');
    assert.equal(real.prior_commit_seq, prior);
    assert.equal(real.new_commit_seq, prior + 1);
    assert.equal(real.prior_snapshot_token, dry.prior_snapshot_token);
    assert.equal(await headSeq(r), prior + 1, 'one atomic commit');
    assert.deepEqual([...real.removed_sample].sort(), ['Person/Cal', 'Person/Dee', 'Thing/Eek']);

    // Current state.
    const ann = await entityIri(r, 'Person', 'Ann');
    for (const name of ['Cal', 'Dee', 'Eek']) {
      assert.deepEqual(await sparql(r, `SELECT ?e WHERE { ?e <${RDFS_LABEL}> "${name}" }`), [], `${name} left SPARQL`);
    }
    assert.deepEqual(await stateOf(r, 'Person', 'Cal'), []);
    assert.deepEqual(await stateOf(r, 'Person', 'Ann'), ['knows→Ben', 'likes→Fig']);
    assert.deepEqual(ok(await getJson(r, '/v1/graph/entity?type=Person&name=Ann')).attributes, { age: 2 });
    assert.deepEqual(ok(await getJson(r, '/v1/graph/entity?type=Thing&name=Eek')).attributes, {});
    const names = await sparql(r, `SELECT ?n WHERE { ?e <${RDFS_LABEL}> ?n } ORDER BY ?n`);
    assert.deepEqual(names.map((x) => x.n), ['"Ann"', '"Ben"', '"Fig"']);
    // As of the prior commit: the old state, everywhere.
    const pin = `as_of_commit_seq=${real.prior_commit_seq}`;
    assert.deepEqual((await sparql(r, `SELECT ?n WHERE { ?e <${RDFS_LABEL}> ?n } ORDER BY ?n`, pin)).map((x) => x.n), ['"Ann"', '"Ben"', '"Cal"', '"Dee"', '"Eek"']);
    assert.equal(await countAll(r, pin), total);
    assert.deepEqual(await stateOf(r, 'Person', 'Cal', { as_of_commit_seq: prior }), ['knows→Dee']);
    assert.deepEqual(await stateOf(r, 'Person', 'Ann', { as_of_commit_seq: prior }), ['knows→Ben', 'knows→Cal']);
    assert.deepEqual(ok(await getJson(r, `/v1/graph/entity?type=Person&name=Ann&${pin}`)).attributes, { age: 1, nick: 'A' });
    assert.equal((await sparql(r, `SELECT ?o WHERE { ${ann} <${BASE}r/knows> ?o }`, pin)).length, 2);

    // Replay with the key; the key with another payload; the same payload again (no-op).
    const head = await headSeq(r);
    const replay = ok(await postNdjson(r, '/v1/graph/reload?confirm=main', payload, { 'idempotency-key': 'reload-1' }));
    assert.equal(replay.idempotent_replay, true);
    assert.equal(replay.new_commit_seq, real.new_commit_seq);
    assert.equal(replay.entities_removed, 0);
    const reused = await postNdjson(r, '/v1/graph/reload?confirm=main', payload.slice(0, 1), { 'idempotency-key': 'reload-1' });
    assert.equal(reused.status, 409);
    assert.equal(reused.body.error.code, 'idempotency_key_reused');
    const again = ok(await postNdjson(r, '/v1/graph/reload?confirm=main&dry_run=true', payload));
    assert.equal(again.no_op, true);
    assert.equal(again.entities_removed + again.entities_added + again.edges_added + again.edges_removed, 0);
    const same = ok(await postNdjson(r, '/v1/graph/reload?confirm=main', payload));
    assert.equal(same.no_op, true);
    assert.equal(same.new_commit_seq, head);
    assert.equal(await headSeq(r), head);
  });

  test('strict reload with a bad line writes nothing', async () => {
    const head = await headSeq(r);
    const res = await postNdjson(r, '/v1/graph/reload?confirm=main&strict=true', ['nope']);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_ndjson_line');
    assert.equal(await headSeq(r), head);
    assert.deepEqual(await stateOf(r, 'Person', 'Ann'), ['knows→Ben', 'likes→Fig']);
  });
});

describe('reload: one entity on several lines', () => {
  test('the last value of a field wins, whatever its case', async () => {
    const b = ok(await postNdjson(r, '/v1/graph/reload?confirm=main', [
      triplet(['Person', 'Ann'], 'knows', ['Person', 'Ben']),
      { type: 'Person', name: 'Ann', properties: { Age: 5, nick: 'first' } },
      triplet(['Person', 'Ann'], 'likes', ['Food', 'Fig']),
      { type: 'Person', name: 'Ann', properties: { age: 6 } },
    ]));
    assert.deepEqual([b.entities_added, b.entities_removed, b.entities_changed, b.edges_added, b.edges_removed, b.edges_changed], [0, 0, 3, 0, 0, 2]);
    assert.deepEqual(ok(await getJson(r, '/v1/graph/entity?type=Person&name=Ann')).attributes, { age: 6, nick: 'first' });
    const ann = await entityIri(r, 'Person', 'Ann');
    assert.deepEqual(await sparql(r, `SELECT ?v WHERE { ${ann} <${BASE}p/age> ?v }`), [{ v: '"6"^^<http://www.w3.org/2001/XMLSchema#integer>' }]);
  });
});

describe('graph lifecycle and the fixed scope', () => {
  test('create is idempotent; /v1/graphs lists the one graph; another graph is 404 graph_not_found', async () => {
    const head = await headSeq(r);
    for (let i = 0; i < 2; i++) {
      const b = ok(await postJson(r, '/v1/graph/create', ''));
      assert.deepEqual(b.graph, { tenant_id: 'local', graph_id: 'main', branch_id: 'main' });
      assert.equal(b.commit_seq, head);
      assert.equal(typeof b.ontology_version, 'number');
    }
    const ok2 = ok(await postJson(r, '/v1/graph/create?graph=main&branch=main', ''));
    assert.equal(ok2.commit_seq, head);
    const list = ok(await getJson(r, '/v1/graphs'));
    assert.equal(list.object, 'list');
    assert.deepEqual(list.data, [{ graph_id: 'main', branches: ['main'] }]);
    assert.equal(list.has_more, false);

    for (const [method, path] of [
      ['GET', '/v1/graphs?graph=other'],
      ['POST', '/v1/graph/create?graph=other'],
      ['POST', '/v1/graph/commit?graph=other'],
      ['POST', '/v1/graph/retract?graph=other'],
      ['POST', '/v1/graph/import?graph=other'],
      ['POST', '/v1/graph/reload?graph=other&confirm=other'],
      ['POST', '/v1/graph/delete?graph=other&confirm=other'],
      ['GET', '/v1/graph/entity?graph=other&type=Person&name=Ann'],
    ] as const) {
      const res = await r.fetch(path, {
        method,
        ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ triplets: [triplet(['Person', 'Other'], 'knows', ['Person', 'Graph'])] }) } : {}),
      });
      const e = await assertError(res, 404, 'graph_not_found');
      assert.match(e.message, /main/);
    }
    const branch = await r.fetch('/v1/graph/commit?branch=dev', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ triplets: [triplet(['Person', 'Other'], 'knows', ['Person', 'Branch'])] }),
    });
    await assertError(branch, 404, 'branch_not_found');
    assert.equal(await headSeq(r), head, 'nothing written');
  });

  test('delete with confirm empties current state; history stays; commit_seq keeps increasing', async () => {
    const head = await headSeq(r);
    const total = await countAll(r);
    assert.ok(total > 0);
    const refused = await r.fetch('/v1/graph/delete', { method: 'POST' });
    await assertError(refused, 400, 'confirmation_required');
    const wrong = await r.fetch('/v1/graph/delete?confirm=mian', { method: 'POST' });
    await assertError(wrong, 400, 'confirmation_required');
    assert.equal(await countAll(r), total);

    const b = ok(await postJson(r, '/v1/graph/delete?confirm=main', ''));
    assert.equal(b.ok, true);
    assert.equal(b.graph_id, 'main');
    for (const k of ['deleted_branches', 'deleted_objects', 'deleted_feedback_objects', 'deleted_bytes']) assert.equal(typeof b[k], 'number');
    assert.equal(await headSeq(r), head + 1);
    assert.equal(await countAll(r), 0);
    assert.deepEqual(await stateOf(r, 'Person', 'Ann'), []);
    assert.equal(ok(await getJson(r, '/v1/graph/entities/sample?type=Person')).total_count, 0);
    const summary = ok(await getJson(r, '/v1/graph/summary'));
    assert.equal(summary.entity_count, 0);
    assert.equal(summary.current_edge_count, 0);
    // History remains.
    assert.equal(await countAll(r, `as_of_commit_seq=${head}`), total);
    assert.deepEqual(await stateOf(r, 'Person', 'Ann', { as_of_commit_seq: head }), ['knows→Ben', 'likes→Fig']);
    const hist = ok(await postJson(r, '/v1/query/history', { source: { entity_type: 'Person', name: 'Ann' }, relation: 'knows' }));
    assert.deepEqual(hist.history.map((h: Json) => h.op).slice(-1), ['retract']);
    // Writing again continues the sequence.
    const next = await commitOk(r, { triplets: [triplet(['Person', 'Ann'], 'knows', ['Person', 'Ben'])] });
    assert.equal(next, head + 2);
    assert.deepEqual(await stateOf(r, 'Person', 'Ann'), ['knows→Ben']);
    assert.equal(await countAll(r), 5, 'two entities (type + label) and the edge');
    // Deleting an empty graph twice: the second changes nothing.
    ok(await postJson(r, '/v1/graph/delete?confirm=main', ''));
    const h2 = await headSeq(r);
    ok(await postJson(r, '/v1/graph/delete?confirm=main', ''));
    assert.equal(await headSeq(r), h2);
  });
});

describe('summary', () => {
  test('entity types by written name, relations, counts after triplet commits', async () => {
    const before = ok(await getJson(s, '/v1/graph/summary'));
    await commitOk(s, {
      triplets: [
        triplet(['SummaryPerson', 'S1'], 'summary_rel', ['SummaryOrg', 'O1']),
        triplet(['SummaryPerson', 'S2'], 'summary_rel', ['SummaryOrg', 'O1']),
      ],
    });
    const after = ok(await getJson(s, '/v1/graph/summary'));
    const head = await headSeq(s);
    assert.equal(after.snapshot.commit_seq, head);
    assert.equal(after.entity_count, before.entity_count + 3);
    assert.equal(after.current_edge_count, before.current_edge_count + 2);
    assert.equal(after.edge_event_count, before.edge_event_count + 2);
    assert.equal(after.observation_count, before.observation_count + 2);
    const types = Object.fromEntries(after.entity_types.map((t: Json) => [t.name, t.count]));
    assert.equal(types.SummaryPerson, 2);
    assert.equal(types.SummaryOrg, 1);
    assert.ok(types.Person >= 2);
    assert.ok(!Object.keys(types).some((n) => n.startsWith('http')), `types by name: ${Object.keys(types)}`);
    const rels = Object.fromEntries(after.relations.map((t: Json) => [t.name, t.count]));
    assert.equal(rels.summary_rel, 2);
    assert.ok(rels.works_at >= 2);
    assert.equal(rels[RDF_TYPE], undefined);
    assert.equal(rels[RDFS_LABEL], undefined);
    assert.ok(after.relation_adjacency.some((a: Json) => a.relation === 'summary_rel' && a.source_type === 'SummaryPerson' && a.target_type === 'SummaryOrg' && a.count === 2));
  });
});

describe('restart', () => {
  test('idempotency records survive a restart (commit, retract, import, reload)', async () => {
    const sHead = await headSeq(s);
    const rHead = await headSeq(r);
    await Promise.all([s.stop(), r.stop()]);
    [s, r] = await Promise.all([startStackd({ dataDir: s.dataDir }), startStackd({ dataDir: r.dataDir })]);
    assert.equal(await headSeq(s), sHead);
    assert.equal(await headSeq(r), rHead);

    const c = ok(await commit(s, { triplets: [triplet(['Person', 'Ida'], 'works_at', ['Company', 'Keyco'], { evidence: 'badge' })] }, { key: 'idem-commit' }));
    assert.equal(c.replayed, true);
    const c2 = await commit(s, { triplets: [triplet(['Person', 'Ida'], 'works_at', ['Company', 'Otherco'], { evidence: 'badge' })] }, { key: 'idem-commit' });
    assert.equal(c2.status, 409);
    const rt = ok(await postJson(s, '/v1/graph/retract', { edges: [{ source: { type: 'Person', name: 'Rex' }, relation: 'owns', target: { type: 'Car', name: 'Beetle' } }] }, { 'idempotency-key': 'idem-retract' }));
    assert.equal(rt.idempotent_replay, true);
    const im = ok(await postNdjson(s, '/v1/graph/import', [triplet(['Person', 'Imp'], 'knows', ['Person', 'Ort']), { type: 'Person', name: 'Imp', properties: { shoe: 42 } }], { 'idempotency-key': 'idem-import' }));
    assert.equal(im.idempotent_replay, true);
    const rl = ok(await postNdjson(r, '/v1/graph/reload?confirm=main', [
      triplet(['Person', 'Ann'], 'knows', ['Person', 'Ben']),
      triplet(['Person', 'Ann'], 'likes', ['Food', 'Fig']),
      { type: 'Person', name: 'Ann', properties: { age: 2 } },
    ], { 'idempotency-key': 'reload-1' }));
    assert.equal(rl.idempotent_replay, true);
    assert.equal(await headSeq(s), sHead, 'replays after a restart write nothing');
    assert.equal(await headSeq(r), rHead);
    // And the data is what it was.
    assert.deepEqual(await stateOf(s, 'Person', 'Rita'), ['likes→Pie']);
    assert.deepEqual(await stateOf(r, 'Person', 'Ann'), [], 'the graph was last deleted');
    assert.deepEqual(await stateOf(r, 'Person', 'Ann', { as_of_commit_seq: rHead - 1 }), ['knows→Ben']);
  });
});
