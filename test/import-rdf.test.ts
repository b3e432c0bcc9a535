/**
 * POST /v1/graph/import/rdf and GET /v1/graph/export/rdf, black-box: formats, the response
 * fields, named graphs, blank-node scopes, syntax errors (strict or not), limits, bad
 * requests, idempotency keys, and an export that loads back into a fresh server unchanged.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startStackd, importRdf, removeDir, selectRows, countTriples, type Stackd } from './helpers/server.js';
import { assertError, assertMeta, parseRdf } from './helpers/http.js';

const EX = 'http://example.org/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';

interface ImportResponse {
  graph_created: boolean;
  lines_read: number;
  triples_read: number;
  resource_triples: number;
  literal_triples: number;
  duplicate_resource_triples: number;
  duplicate_literal_triples: number;
  imported_triplets: number;
  batches: number;
  committed_commit_seq: number | null;
  predicate_count: number;
  predicates: { uri: string; relation: string; lbb_relation_iri: string; lbb_predicate_iri: string; resource_triples: number; literal_triples: number; triples: number }[];
  error_count: number;
  errors: { message: string }[];
  published_generation: unknown;
}

let s: Stackd;
let small: Stackd;

before(async () => {
  [s, small] = await Promise.all([startStackd(), startStackd({ args: ['--max-import-bytes', '1000'] })]);
});

after(async () => {
  await Promise.all([s?.stop(), small?.stop()]);
  for (const x of [s, small]) if (x) removeDir(x.dataDir);
});

async function ok(res: Response): Promise<ImportResponse> {
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assertMeta(res);
  return JSON.parse(text) as ImportResponse;
}

async function headSeq(x: Stackd): Promise<number> {
  const res = await x.fetch('/v1/status');
  assert.equal(res.status, 200);
  return ((await res.json()) as { head_seq: number }).head_seq;
}

async function exportText(x: Stackd, format: string): Promise<string> {
  const res = await x.fetch('/v1/graph/export/rdf?format=' + format);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assertMeta(res);
  return text;
}

/** Everything durable and queryable, to show that a refused request wrote nothing. */
async function state(x: Stackd) {
  return { seq: await headSeq(x), quads: (await exportText(x, 'nq')).split('\n').sort().join('\n'), head: await countTriples(x) };
}

async function ask(x: Stackd, query: string): Promise<boolean> {
  const res = await x.fetch('/sparql?query=' + encodeURIComponent(query));
  assert.equal(res.status, 200);
  return ((await res.json()) as { boolean: boolean }).boolean;
}

const import_ = (body: string | Uint8Array<ArrayBuffer>, query = '', contentType = 'application/n-triples', headers: Record<string, string> = {}) =>
  s.fetch('/v1/graph/import/rdf' + (query ? '?' + query : ''), { method: 'POST', headers: { 'content-type': contentType, ...headers }, body });

describe('formats and response fields', () => {
  let lastSeq = 0;
  const nextSeq = (r: ImportResponse) => {
    assert.ok(r.committed_commit_seq !== null && r.committed_commit_seq > lastSeq, `commit_seq ${r.committed_commit_seq} after ${lastSeq}`);
    lastSeq = r.committed_commit_seq;
  };

  test('N-Triples: counts, predicates, a first commit that creates the graph', async () => {
    const nt = [
      '# a comment line',
      `<${EX}a> <${EX}name> "A" .`,
      '',
      `<${EX}a> <${EX}knows> <${EX}b> .`,
      `<${EX}b> <${EX}name> "B"@en .`,
      `<${EX}b> <${EX}age> "7"^^<${XSD}integer> .`,
      `<${EX}a> <${EX}knows> _:x .`,
    ].join('\n') + '\n';
    const r = await ok(await import_(nt));
    assert.equal(r.graph_created, true);
    assert.equal(r.lines_read, 7);
    assert.equal(r.triples_read, 5);
    assert.equal(r.resource_triples, 2);
    assert.equal(r.literal_triples, 3);
    assert.equal(r.duplicate_resource_triples, 0);
    assert.equal(r.duplicate_literal_triples, 0);
    assert.equal(r.imported_triplets, 5);
    assert.equal(r.batches, 1);
    assert.equal(r.error_count, 0);
    assert.deepEqual(r.errors, []);
    assert.equal(r.predicate_count, 3);
    const byUri = Object.fromEntries(r.predicates.map((p) => [p.uri, p]));
    assert.deepEqual(Object.keys(byUri).sort(), [`${EX}age`, `${EX}knows`, `${EX}name`]);
    assert.deepEqual(
      { resource: byUri[`${EX}knows`]!.resource_triples, literal: byUri[`${EX}knows`]!.literal_triples, triples: byUri[`${EX}knows`]!.triples },
      { resource: 2, literal: 0, triples: 2 },
    );
    assert.deepEqual(
      { resource: byUri[`${EX}name`]!.resource_triples, literal: byUri[`${EX}name`]!.literal_triples, triples: byUri[`${EX}name`]!.triples },
      { resource: 0, literal: 2, triples: 2 },
    );
    for (const p of r.predicates) {
      assert.equal(p.relation, 'RDF_TRIPLE');
      assert.equal(p.lbb_predicate_iri, p.uri);
      assert.equal(typeof p.lbb_relation_iri, 'string');
    }
    nextSeq(r);
    assert.equal(await headSeq(s), r.committed_commit_seq);
    assert.ok(await ask(s, `ASK { <${EX}b> <${EX}name> "B"@en ; <${EX}age> 7 }`));
  });

  test('re-importing the same statements: all duplicates, no new commit', async () => {
    const before = await headSeq(s);
    const nt = `<${EX}a> <${EX}name> "A" .\n<${EX}a> <${EX}knows> <${EX}b> .\n<${EX}new> <${EX}name> "N" .\n`;
    const r = await ok(await import_(nt));
    assert.equal(r.graph_created, false);
    assert.equal(r.triples_read, 3);
    assert.equal(r.imported_triplets, 1);
    assert.equal(r.duplicate_literal_triples, 1);
    assert.equal(r.duplicate_resource_triples, 1);
    nextSeq(r);
    const again = await ok(await import_(nt));
    assert.equal(again.imported_triplets, 0);
    assert.equal(again.duplicate_literal_triples, 2);
    assert.equal(again.duplicate_resource_triples, 1);
    assert.equal(again.committed_commit_seq, null);
    assert.equal(again.batches, 0);
    assert.equal(await headSeq(s), before + 1);
  });

  test('the same literal written differently is a duplicate (xsd:string, language-tag case)', async () => {
    await ok(await import_(`<${EX}c> <${EX}label> "hello"@en-GB .\n<${EX}c> <${EX}note> "plain" .\n`));
    const r = await ok(await import_(`<${EX}c> <${EX}label> "hello"@EN-gb .\n<${EX}c> <${EX}note> "plain"^^<${XSD}string> .\n`));
    assert.equal(r.imported_triplets, 0);
    assert.equal(r.duplicate_literal_triples, 2);
  });

  const bodies = {
    ntriples: `<${EX}f/nt> <${EX}p> "nt" .\n`,
    turtle: `@prefix ex: <${EX}> .\nex:f\\/ttl ex:p "ttl" ;\n  ex:q ex:o .\n`,
    nquads: `<${EX}f/nq> <${EX}p> "nq" <${EX}gq> .\n<${EX}f/nq> <${EX}p> "nq-default" .\n`,
    trig: `@prefix ex: <${EX}> .\nex:gt { ex:f\\/trig ex:p "trig" . }\nex:f\\/trig ex:p "trig-default" .\n`,
  };
  const checks: Record<keyof typeof bodies, string> = {
    ntriples: `ASK { <${EX}f/nt> <${EX}p> "nt" }`,
    turtle: `ASK { <${EX}f/ttl> <${EX}p> "ttl" ; <${EX}q> <${EX}o> }`,
    nquads: `ASK { GRAPH <${EX}gq> { <${EX}f/nq> <${EX}p> "nq" } }`,
    trig: `ASK { GRAPH <${EX}gt> { <${EX}f/trig> <${EX}p> "trig" } }`,
  };
  const types: Record<keyof typeof bodies, string> = {
    ntriples: 'application/n-triples',
    turtle: 'text/turtle',
    nquads: 'application/n-quads',
    trig: 'application/trig',
  };

  for (const format of Object.keys(bodies) as (keyof typeof bodies)[]) {
    test(`${format}, chosen by Content-Type ${types[format]}`, async () => {
      const r = await ok(await import_(bodies[format], '', types[format]));
      assert.equal(r.imported_triplets, 2 - (format === 'ntriples' ? 1 : 0));
      nextSeq(r);
      assert.ok(await ask(s, checks[format]));
    });
  }

  test('format= chooses the syntax (and wins over a neutral or different Content-Type)', async () => {
    const cases: [string, string, string, string][] = [
      ['ntriples', 'text/plain', `<${EX}g/nt> <${EX}p> "1" .\n`, `ASK { <${EX}g/nt> <${EX}p> "1" }`],
      ['turtle', 'application/octet-stream', `<${EX}g/ttl> <${EX}p> 2 .\n`, `ASK { <${EX}g/ttl> <${EX}p> 2 }`],
      ['nquads', 'text/plain', `<${EX}g/nq> <${EX}p> "3" <${EX}gg> .\n`, `ASK { GRAPH <${EX}gg> { <${EX}g/nq> <${EX}p> "3" } }`],
      ['trig', 'application/n-triples', `<${EX}gh> { <${EX}g/trig> <${EX}p> "4" }\n`, `ASK { GRAPH <${EX}gh> { <${EX}g/trig> <${EX}p> "4" } }`],
    ];
    for (const [format, type, body, check] of cases) {
      const r = await ok(await import_(body, 'format=' + format, type));
      assert.equal(r.imported_triplets, 1, format);
      nextSeq(r);
      assert.ok(await ask(s, check), format);
    }
  });

  test('Turtle: lines_read counts the document, triples_read the statements', async () => {
    const ttl = `@prefix ex: <${EX}> .\n\nex:t1 ex:p 1, 2, 3 ;\n  ex:q [ ex:r "nested" ] .\n`;
    const r = await ok(await import_(ttl, 'format=turtle'));
    assert.equal(r.lines_read, 4);
    assert.equal(r.triples_read, 5);
    assert.equal(r.literal_triples, 4);
    assert.equal(r.resource_triples, 1);
    nextSeq(r);
  });

  test('base_iri resolves relative IRIs in Turtle; without it they are a syntax error', async () => {
    const ttl = '<rel/x> <p> <../y> .\n';
    const r = await ok(await import_(ttl, 'format=turtle&base_iri=' + encodeURIComponent('http://base.example/dir/sub/')));
    assert.equal(r.imported_triplets, 1);
    nextSeq(r);
    assert.ok(await ask(s, 'ASK { <http://base.example/dir/sub/rel/x> <http://base.example/dir/sub/p> <http://base.example/dir/y> }'));
    await assertError(await import_(ttl, 'format=turtle'), 400, 'rdf_syntax_error');
    await assertError(await import_(ttl, 'format=turtle&base_iri=relative/'), 400, 'invalid_parameter');
  });

  test('graph_uri puts N-Triples and Turtle into that named graph', async () => {
    const g = `${EX}named`;
    const nt = await ok(await import_(`<${EX}h/nt> <${EX}p> "x" .\n`, 'graph_uri=' + encodeURIComponent(g)));
    nextSeq(nt);
    const ttl = await ok(await import_(`<${EX}h/ttl> <${EX}p> "y" .\n`, 'format=turtle&graph_uri=' + encodeURIComponent(g)));
    nextSeq(ttl);
    const rows = await selectRows(s, `SELECT ?s WHERE { GRAPH <${g}> { ?s <${EX}p> ?o } } ORDER BY ?s`);
    assert.deepEqual(rows.map((r) => r.s!.value), [`${EX}h/nt`, `${EX}h/ttl`]);
    // the same triple without graph_uri is a different statement (default graph)
    const dflt = await ok(await import_(`<${EX}h/nt> <${EX}p> "x" .\n`));
    assert.equal(dflt.imported_triplets, 1);
    nextSeq(dflt);
  });

  test('graph_uri is refused with N-Quads and TriG, and must be absolute', async () => {
    const before = await state(s);
    for (const [q, type] of [
      ['format=nquads', 'text/plain'],
      ['', 'application/n-quads'],
      ['format=trig', 'text/plain'],
      ['', 'application/trig'],
    ]) {
      const e = await assertError(await import_(`<${EX}z> <${EX}p> "z" .\n`, `${q}${q ? '&' : ''}graph_uri=${encodeURIComponent(EX + 'g')}`, type), 400, 'invalid_parameter');
      assert.equal(e.param, 'graph_uri');
    }
    await assertError(await import_(`<${EX}z> <${EX}p> "z" .\n`, 'graph_uri=not-absolute'), 400, 'invalid_parameter');
    assert.deepEqual(await state(s), before);
  });
});

describe('blank nodes', () => {
  const subjectsOf = async (p: string) => {
    const rows = await selectRows(s, `SELECT DISTINCT ?s WHERE { ?s <${p}> ?o }`);
    return rows.map((r) => r.s!);
  };
  const sameNode = async (p1: string, p2: string) => ask(s, `ASK { ?s <${p1}> ?a ; <${p2}> ?b }`);

  test('without blank_node_scope, a label names the same node across requests', async () => {
    await ok(await import_(`_:person <${EX}bn/first> "1" .\n`));
    await ok(await import_(`_:person <${EX}bn/second> "2" .\n`));
    assert.ok(await sameNode(`${EX}bn/first`, `${EX}bn/second`));
    const [node] = await subjectsOf(`${EX}bn/first`);
    assert.equal(node!.type, 'bnode');
  });

  test('different scopes: different nodes; the same scope: the same node (N-Triples and Turtle)', async () => {
    await ok(await import_(`_:b <${EX}sc/a> "1" .\n`, 'blank_node_scope=doc-A'));
    await ok(await import_(`_:b <${EX}sc/b> "2" .\n`, 'blank_node_scope=doc-B'));
    await ok(await import_(`_:b <${EX}sc/c> "3" .\n`, 'blank_node_scope=doc-A'));
    await ok(await import_(`_:b <${EX}sc/d> "4" .\n`, 'blank_node_scope=doc-A&format=turtle'));
    await ok(await import_(`_:b <${EX}sc/e> "5" .\n`));
    assert.equal(await sameNode(`${EX}sc/a`, `${EX}sc/b`), false);
    assert.equal(await sameNode(`${EX}sc/a`, `${EX}sc/c`), true);
    assert.equal(await sameNode(`${EX}sc/a`, `${EX}sc/d`), true);
    assert.equal(await sameNode(`${EX}sc/a`, `${EX}sc/e`), false, 'a scoped label is not the unscoped one');
    assert.equal(await sameNode(`${EX}sc/b`, `${EX}sc/e`), false);
    const all = await selectRows(s, `SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?p), "${EX}sc/")) }`);
    assert.equal(all.length, 3);
    assert.ok(all.every((r) => r.s!.type === 'bnode'));
  });

  test('a scoped blank node in object and graph positions (N-Quads)', async () => {
    await ok(await import_(`<${EX}q/s> <${EX}q/p> _:o _:g .\n`, 'blank_node_scope=doc-Q', 'application/n-quads'));
    await ok(await import_(`_:o <${EX}q/name> "obj" .\n`, 'blank_node_scope=doc-Q'));
    assert.ok(await ask(s, `ASK { GRAPH ?g { <${EX}q/s> <${EX}q/p> ?o } ?o <${EX}q/name> "obj" FILTER(isBlank(?g)) }`));
  });
});

describe('syntax errors', () => {
  const good = (i: number) => `<${EX}bulk/${i}> <${EX}bulk/p> "v${i}" .`;
  /** More good lines than one parse chunk (2000), then a bad line: the abort has to undo loaded chunks. */
  const withBadLine = (n: number, badAt: number) => {
    const lines: string[] = [];
    for (let i = 1; i <= n; i++) lines.push(i === badAt ? `<${EX}bulk/${i}> <${EX}bulk/p> oops .` : good(i));
    return lines.join('\n') + '\n';
  };

  test('strict=true: 400 rdf_syntax_error naming line and column, and nothing written', async () => {
    const before = await state(s);
    const e = await assertError(await import_(withBadLine(2600, 2500), 'strict=true'), 400, 'rdf_syntax_error');
    assert.match(e.message, /line 2500\b/);
    assert.match(e.message, /column \d+/);
    assert.deepEqual(await state(s), before);
    assert.equal(await ask(s, `ASK { <${EX}bulk/1> ?p ?o }`), false);
  });

  test('strict=false (default): good lines imported, bad line numbers reported', async () => {
    const nt = [good(1), 'not a triple', good(2), `<${EX}x> <${EX}p> "unterminated .`, good(3), ''].join('\n');
    const r = await ok(await import_(nt));
    assert.equal(r.imported_triplets, 3);
    assert.equal(r.lines_read, 5);
    assert.equal(r.triples_read, 3);
    assert.equal(r.error_count, 2);
    assert.equal(r.errors.length, 2);
    assert.match(r.errors[0]!.message, /line 2\b/);
    assert.match(r.errors[1]!.message, /line 4\b/);
    assert.ok(await ask(s, `ASK { <${EX}bulk/3> ?p "v3" }`));
    const explicit = await ok(await import_(`${good(10)}\nbad\n`, 'strict=false'));
    assert.equal(explicit.imported_triplets, 1);
    assert.equal(explicit.error_count, 1);
  });

  test('a Turtle syntax error is 400 and writes nothing, strict or not', async () => {
    const big = `@prefix ex: <${EX}> .\n` + Array.from({ length: 2500 }, (_, i) => `ex:t${i} ex:p ${i} .`).join('\n') + '\nex:broken ex:p ;\n';
    for (const q of ['format=turtle', 'format=turtle&strict=true', 'format=turtle&strict=false']) {
      const before = await state(s);
      const e = await assertError(await import_(big, q), 400, 'rdf_syntax_error');
      assert.match(e.message, /line 2502\b/);
      assert.deepEqual(await state(s), before);
    }
  });

  test('TriG syntax error: 400, nothing written', async () => {
    const before = await state(s);
    await assertError(await import_(`<${EX}g> { <${EX}a> <${EX}b> "c" .\n`, 'format=trig'), 400, 'rdf_syntax_error');
    assert.deepEqual(await state(s), before);
  });

  test('invalid UTF-8: 400 invalid_encoding, nothing written', async () => {
    const before = await state(s);
    const enc = new TextEncoder();
    const body = new Uint8Array([...enc.encode(`<${EX}u> <${EX}p> "caf`), 0xe9, ...enc.encode('" .\n')]) as Uint8Array<ArrayBuffer>;
    const e = await assertError(await import_(body), 400, 'invalid_encoding');
    assert.equal(e.param, 'body');
    await assertError(await import_(body, 'format=turtle'), 400, 'invalid_encoding');
    assert.deepEqual(await state(s), before);
  });
});

describe('refused requests write nothing', () => {
  const nt = `<${EX}refused> <${EX}p> "r" .\n`;
  let snapshot: Awaited<ReturnType<typeof state>>;
  before(async () => {
    snapshot = await state(s);
  });
  after(async () => {
    assert.deepEqual(await state(s), snapshot);
  });

  test('415 for a Content-Type that is not RDF (and no format)', async () => {
    const e = await assertError(await import_(nt, '', 'application/json'), 415, 'unsupported_media_type');
    assert.equal(e.param, 'Content-Type');
    await assertError(await import_(nt, '', 'application/rdf+xml'), 415, 'unsupported_media_type');
    await assertError(await import_(nt, '', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
  });

  test('415 for a charset other than UTF-8', async () => {
    await assertError(await import_(nt, '', 'application/n-triples; charset=iso-8859-1'), 415, 'unsupported_charset');
  });

  test('400 for an unknown query parameter, a bad format, a bad flag', async () => {
    const e = await assertError(await import_(nt, 'graph_iri=' + encodeURIComponent(EX + 'g')), 400, 'unknown_parameter');
    assert.equal(e.param, 'graph_iri');
    const f = await assertError(await import_(nt, 'format=rdfxml'), 400, 'invalid_parameter');
    assert.equal(f.param, 'format');
    await assertError(await import_(nt, 'strict=maybe'), 400, 'invalid_parameter');
    await assertError(await import_(nt, 'format=ntriples&format=turtle'), 400, 'repeated_parameter');
  });

  test('404 for another graph or branch', async () => {
    await assertError(await import_(nt, 'graph=other'), 404, 'graph_not_found');
    await assertError(await import_(nt, 'branch=other'), 404, 'branch_not_found');
  });
});

describe('size limit', () => {
  const line = (i: number) => `<${EX}big/${i}> <${EX}p> "${'x'.repeat(40)}" .\n`;

  test('a body over max_import_bytes is 413 payload_too_large before anything is written', async () => {
    const ok1 = await small.fetch('/v1/graph/import/rdf', { method: 'POST', headers: { 'content-type': 'application/n-triples' }, body: line(0) });
    assert.equal(ok1.status, 200);
    await ok1.arrayBuffer();
    const before = await state(small);
    const body = Array.from({ length: 40 }, (_, i) => line(i + 1)).join('');
    assert.ok(body.length > 1000);
    const e = await assertError(
      await small.fetch('/v1/graph/import/rdf', { method: 'POST', headers: { 'content-type': 'application/n-triples' }, body }),
      413,
      'payload_too_large',
    );
    assert.match(e.message, /1000 bytes/);
    assert.equal(e.retryable, false);
    // streamed without Content-Length: refused as soon as it passes the limit
    const enc = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 40; i++) c.enqueue(enc.encode(line(100 + i)));
        c.close();
      },
    });
    await assertError(
      await small.fetch('/v1/graph/import/rdf', { method: 'POST', headers: { 'content-type': 'application/n-triples' }, body: stream, duplex: 'half' } as RequestInit),
      413,
      'payload_too_large',
    );
    assert.deepEqual(await state(small), before);
  });
});

describe('idempotency keys', () => {
  const body = `<${EX}idem/a> <${EX}p> "1" .\n<${EX}idem/b> <${EX}p> <${EX}idem/a> .\n`;

  test('same key and body: the first response replayed, nothing new written', async () => {
    const first = await import_(body, '', 'application/n-triples', { 'idempotency-key': 'load-1' });
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const r1 = await ok(first);
    assert.equal(r1.imported_triplets, 2);
    const before = await state(s);
    const second = await import_(body, '', 'application/n-triples', { 'idempotency-key': 'load-1' });
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    const r2 = await ok(second);
    assert.deepEqual(r2, r1);
    assert.deepEqual(await state(s), before);
  });

  test('same key, different body or parameters: 409 idempotency_key_reused, nothing written', async () => {
    const before = await state(s);
    const e = await assertError(await import_(body + `<${EX}idem/c> <${EX}p> "3" .\n`, '', 'application/n-triples', { 'idempotency-key': 'load-1' }), 409, 'idempotency_key_reused');
    assert.equal(e.param, 'Idempotency-Key');
    await assertError(await import_(body, 'graph_uri=' + encodeURIComponent(EX + 'idem-g'), 'application/n-triples', { 'idempotency-key': 'load-1' }), 409, 'idempotency_key_reused');
    assert.deepEqual(await state(s), before);
  });

  test('a request refused for bad input does not use up its key', async () => {
    const key = { 'idempotency-key': 'load-2' };
    await assertError(await import_('bad line\n', 'strict=true', 'application/n-triples', key), 400, 'rdf_syntax_error');
    const r = await ok(await import_(`<${EX}idem/d> <${EX}p> "4" .\n`, '', 'application/n-triples', key));
    assert.equal(r.imported_triplets, 1);
  });
});

describe('export', () => {
  const data = [
    `<${EX}rt/a> <${EX}rt/label> "multi\\nline \\"quoted\\" \\\\ back" .`,
    `<${EX}rt/a> <${EX}rt/label> "日本語"@ja .`,
    `<${EX}rt/a> <${EX}rt/value> "3.14"^^<${XSD}decimal> .`,
    `<${EX}rt/a> <${EX}rt/custom> "x"^^<${EX}rt/dt> .`,
    `<${EX}rt/a> <${EX}rt/link> _:rtnode <${EX}rt/g1> .`,
    `_:rtnode <${EX}rt/label> "in g1" <${EX}rt/g1> .`,
    `<${EX}rt/a> <${EX}rt/label> "in two graphs" <${EX}rt/g1> .`,
    `<${EX}rt/a> <${EX}rt/label> "in two graphs" <${EX}rt/g2> .`,
  ].join('\n') + '\n';

  before(async () => {
    await ok(await import_(data, '', 'application/n-quads'));
  });

  test('each format parses, with the right media type', async () => {
    const formats: [string, string][] = [
      ['turtle', 'text/turtle'],
      ['nt', 'application/n-triples'],
      ['nq', 'application/n-quads'],
      ['trig', 'application/trig'],
    ];
    for (const [format, type] of formats) {
      const res = await s.fetch('/v1/graph/export/rdf?format=' + format);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type')!.split(';')[0], type);
      const got = parseRdf(await res.text(), type);
      assert.ok(got.length > 0);
    }
    // default: Turtle
    const dflt = await s.fetch('/v1/graph/export/rdf');
    assert.equal(dflt.headers.get('content-type')!.split(';')[0], 'text/turtle');
    await dflt.arrayBuffer();
  });

  test('the export loads into a fresh server unchanged, in every format', async () => {
    const nq = await exportText(s, 'nq');
    const nt = await exportText(s, 'nt');
    const sortLines = (t: string) => t.split('\n').filter(Boolean).sort().join('\n');
    // One fresh server takes the triple formats (the union of the graphs), one the quad formats.
    const fresh = await Promise.all([startStackd(), startStackd()]);
    try {
      const plans: [string, string][][] = [
        [
          ['turtle', 'text/turtle'],
          ['nt', 'application/n-triples'],
        ],
        [
          ['trig', 'application/trig'],
          ['nq', 'application/n-quads'],
        ],
      ];
      await Promise.all(
        plans.map(async (plan, i) => {
          const f = fresh[i]!;
          const compareAs = i === 0 ? 'nt' : 'nq';
          for (const [n, [format, type]] of plan.entries()) {
            const r = await ok(await importRdf(f, await exportText(s, format), '', type));
            assert.equal(r.error_count, 0, format);
            // the second format of a plan holds exactly what the first loaded
            if (n > 0) assert.equal(r.imported_triplets, 0, `${format} adds nothing after ${plan[0]![0]}`);
            assert.deepEqual(sortLines(await exportText(f, compareAs)), sortLines(compareAs === 'nq' ? nq : nt), `${format} round trip`);
          }
          const q = `SELECT (COUNT(*) AS ?n) WHERE { <${EX}rt/a> <${EX}rt/label> ?l FILTER(lang(?l) = "ja" || CONTAINS(?l, "\\"quoted\\"")) }`;
          assert.equal((await selectRows(f, q))[0]!.n!.value, '2');
          assert.equal(await ask(f, `ASK { GRAPH <${EX}rt/g1> { <${EX}rt/a> <${EX}rt/link> ?b . ?b <${EX}rt/label> "in g1" } FILTER(isBlank(?b)) }`), i === 1);
        }),
      );
    } finally {
      await Promise.all(fresh.map((f) => f.stop()));
      for (const f of fresh) removeDir(f.dataDir);
    }
  });

  test('max_triples smaller than the graph: 413; truncate=true: a JSON preview', async () => {
    const e = await assertError(await s.fetch('/v1/graph/export/rdf?format=nt&max_triples=3'), 413, 'export_too_large');
    assert.equal(e.param, 'max_triples');
    const total = parseRdf(await exportText(s, 'nt'), 'application/n-triples').length;
    const res = await s.fetch('/v1/graph/export/rdf?format=nt&max_triples=3&truncate=true');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^application\/json/);
    const p = (await res.json()) as { snapshot: { commit_seq: number }; format: string; data: string; returned_triples: number; total_triples: number; truncated: boolean };
    assert.equal(p.format, 'ntriples');
    assert.equal(p.returned_triples, 3);
    assert.equal(p.total_triples, total);
    assert.equal(p.truncated, true);
    assert.equal(parseRdf(p.data, 'application/n-triples').length, 3);
    assert.equal(p.snapshot.commit_seq, await headSeq(s));
    const all = await s.fetch(`/v1/graph/export/rdf?format=nt&max_triples=${total}`);
    assert.equal(all.status, 200);
    assert.equal(parseRdf(await all.text(), 'application/n-triples').length, total);
    const whole = (await (await s.fetch(`/v1/graph/export/rdf?format=turtle&max_triples=${total}&truncate=true`)).json()) as { truncated: boolean; data: string };
    assert.equal(whole.truncated, false);
    assert.equal(parseRdf(whole.data, 'text/turtle').length, total);
  });

  test('bad export parameters', async () => {
    await assertError(await s.fetch('/v1/graph/export/rdf?format=rdfxml'), 400, 'invalid_parameter');
    await assertError(await s.fetch('/v1/graph/export/rdf?max_triples=-1'), 400, 'invalid_parameter');
    await assertError(await s.fetch('/v1/graph/export/rdf?limit=3'), 400, 'unknown_parameter');
  });
});
