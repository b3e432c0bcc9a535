/**
 * System routes, authentication and routing errors, POST /v1/query/sparql-text and
 * GET /v1/graph/summary, black-box against one real server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startStackd, importRdf, removeDir, countTriples, type Stackd } from './helpers/server.js';
import { API_VERSION, assertError, assertMeta, parseResultsJson } from './helpers/http.js';

const EX = 'http://example.org/';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const LBB = 'https://littlebigbrain.com/';

let s: Stackd;

before(async () => {
  s = await startStackd();
});

after(async () => {
  await s?.stop();
  if (s) removeDir(s.dataDir);
});

/** fetch without any Authorization header. */
function anonymous(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(s.url + path, init);
}

async function headSeq(): Promise<number> {
  const res = await s.fetch('/v1/status');
  assert.equal(res.status, 200);
  return ((await res.json()) as { head_seq: number }).head_seq;
}

describe('system routes need no token', () => {
  test('GET /version', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const res = await anonymous('/version', { headers });
      assert.equal(res.status, 200);
      assertMeta(res);
      const v = (await res.json()) as Record<string, unknown>;
      assert.equal(v.version, API_VERSION);
      assert.ok(Array.isArray(v.capabilities));
      assert.ok((v.capabilities as unknown[]).every((c) => typeof c === 'string' && c.length > 0));
      assert.ok((v.capabilities as string[]).includes('sparql_text_v1'));
      assert.equal(typeof v.git_commit, 'string');
      assert.ok((v.git_commit as string).length > 0);
      assert.equal(typeof v.built_at, 'string');
      assert.ok(!Number.isNaN(Date.parse(v.built_at as string)), `built_at ${v.built_at}`);
      assert.equal(typeof v.persisted_format, 'string');
      assert.ok((v.persisted_format as string).length > 0);
    }
  });

  test('GET /healthz', async () => {
    const res = await anonymous('/healthz');
    assert.equal(res.status, 200);
    assertMeta(res);
    assert.equal(((await res.json()) as { status: string }).status, 'ok');
  });
});

describe('authentication', () => {
  const routes: [string, string, RequestInit][] = [
    ['GET /sparql', '/sparql?query=' + encodeURIComponent('ASK {}'), {}],
    ['POST /sparql', '/sparql', { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: 'ASK {}' }],
    [
      'POST /v1/graph/import/rdf',
      '/v1/graph/import/rdf',
      { method: 'POST', headers: { 'content-type': 'application/n-triples', 'idempotency-key': 'k' }, body: `<${EX}a> <${EX}p> "x" .\n` },
    ],
    ['POST /v1/query/sparql-text', '/v1/query/sparql-text', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"ASK {}"}' }],
    ['GET /v1/graph/summary', '/v1/graph/summary', {}],
    ['GET /v1/graph/export/rdf', '/v1/graph/export/rdf', {}],
    ['GET /v1/status', '/v1/status', {}],
  ];

  for (const [name, path, init] of routes) {
    test(`${name}: 401 without a token, with a wrong token, with another scheme`, async () => {
      const missing = await assertError(await anonymous(path, init), 401, 'missing_token', 'authentication_error');
      assert.equal(missing.retryable, false);
      const wrong = await anonymous(path, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: 'Bearer not-the-token' } });
      assert.match(wrong.headers.get('www-authenticate') ?? '', /^Bearer/);
      await assertError(wrong, 401, 'invalid_token', 'authentication_error');
      const basic = await anonymous(path, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Basic ${Buffer.from('u:' + s.token).toString('base64')}` } });
      await assertError(basic, 401, 'missing_token', 'authentication_error');
      const empty = await anonymous(path, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: 'Bearer ' } });
      assert.equal(empty.status, 401);
      await empty.arrayBuffer();
    });
  }

  test('nothing was written by the refused requests', async () => {
    assert.equal(await headSeq(), 0);
    assert.equal(await countTriples(s), 0);
    // the idempotency key of a refused request is still free
    const res = await s.fetch('/v1/graph/import/rdf', {
      method: 'POST',
      headers: { 'content-type': 'application/n-triples', 'idempotency-key': 'k' },
      body: `<${EX}other> <${EX}p> "y" .\n`,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('idempotent-replayed'), null);
    await res.arrayBuffer();
    assert.equal(await countTriples(s), 1);
  });

  test('the token is accepted case-insensitively on the scheme', async () => {
    const res = await anonymous('/v1/status', { headers: { authorization: `bearer ${s.token}` } });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  });
});

describe('routing errors', () => {
  test('unknown routes: 404 route_not_found with the envelope and headers', async () => {
    const routes: [string, string][] = [
      ['GET', '/nope'],
      ['GET', '/v1/nope'],
      ['POST', '/v1/graph/nope'],
      ['GET', '/v2/sparql'],
    ];
    for (const [method, path] of routes) {
      const e = await assertError(await s.fetch(path, { method }), 404, 'route_not_found');
      assert.match(e.message, new RegExp(path.replace(/\//g, '\\/')));
    }
    await assertError(await anonymous('/nope'), 404, 'route_not_found');
  });

  test('a client x-request-id is echoed in header and body', async () => {
    const res = await s.fetch('/nope', { headers: { 'x-request-id': 'trace-123' } });
    assert.equal(res.headers.get('x-request-id'), 'trace-123');
    assert.equal((await assertError(res, 404, 'route_not_found')).request_id, 'trace-123');
  });
});

describe('POST /v1/query/sparql-text', () => {
  const N = 25;
  before(async () => {
    const lines = Array.from({ length: N }, (_, i) => `<${EX}item/${String(i).padStart(2, '0')}> <${EX}rank> "${i}"^^<http://www.w3.org/2001/XMLSchema#integer> .`);
    lines.push(`<${EX}item/00> <${EX}label> "zéro"@fr .`);
    const res = await importRdf(s, lines.join('\n') + '\n');
    assert.equal(res.status, 200, await res.clone().text());
  });

  interface TextResponse {
    results: string;
    row_page: { returned: number; total: number; offset: number; limit: number; has_more: boolean; next_offset: number | null };
    snapshot?: { commit_seq: number } | null;
  }

  const sparqlText = (body: unknown, contentType = 'application/json', query = '') =>
    s.fetch('/v1/query/sparql-text' + query, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  async function ok(res: Response): Promise<TextResponse> {
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assertMeta(res);
    const r = JSON.parse(text) as TextResponse;
    assert.equal(typeof r.results, 'string', 'results is the SPARQL JSON document as a string');
    return r;
  }

  const ranked = `SELECT ?s ?r WHERE { ?s <${EX}rank> ?r } ORDER BY ?r`;
  const itemAt = (i: number) => `<${EX}item/${String(i).padStart(2, '0')}>`;

  test('SELECT: results is the SPARQL JSON document, with every row when no limit is given', async () => {
    const r = await ok(await sparqlText({ query: ranked }));
    const doc = parseResultsJson(r.results);
    assert.deepEqual(doc.vars, ['s', 'r']);
    assert.equal(doc.rows.length, N);
    assert.equal(doc.rows[3]!.s, itemAt(3));
    assert.equal(doc.rows[3]!.r, '"3"^^<http://www.w3.org/2001/XMLSchema#integer>');
    assert.equal(r.row_page.returned, N);
    assert.equal(r.row_page.total, N);
    assert.equal(r.row_page.offset, 0);
    assert.equal(r.row_page.has_more, false);
    assert.equal(r.row_page.next_offset ?? null, null);
  });

  test('limit and offset page through the rows in order', async () => {
    const seen: string[] = [];
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const r = await ok(await sparqlText({ query: ranked, limit: 10, offset }));
      const rows = parseResultsJson(r.results).rows;
      assert.equal(r.row_page.offset, offset);
      assert.equal(r.row_page.limit, 10);
      assert.equal(r.row_page.total, N);
      assert.equal(r.row_page.returned, rows.length);
      assert.equal(r.row_page.has_more, offset + rows.length < N);
      seen.push(...rows.map((row) => row.s!));
      offset = r.row_page.has_more ? r.row_page.next_offset : null;
      if (!r.row_page.has_more) assert.equal(r.row_page.next_offset ?? null, null);
      pages++;
    }
    assert.equal(pages, 3);
    // limit 0 counts without paging: no next offset that would not advance
    const zero = await ok(await sparqlText({ query: ranked, limit: 0 }));
    assert.equal(zero.row_page.returned, 0);
    assert.equal(zero.row_page.total, N);
    assert.equal(zero.row_page.has_more, true);
    assert.equal(zero.row_page.next_offset ?? null, null);
    assert.deepEqual(seen, Array.from({ length: N }, (_, i) => itemAt(i)));
    const past = await ok(await sparqlText({ query: ranked, offset: 100 }));
    assert.equal(past.row_page.returned, 0);
    assert.equal(past.row_page.has_more, false);
    assert.deepEqual(parseResultsJson(past.results).rows, []);
  });

  test('ASK and language tags are answered like /sparql', async () => {
    assert.equal(parseResultsJson((await ok(await sparqlText({ query: `ASK { ${itemAt(0)} <${EX}label> "zéro"@fr }` }))).results).boolean, true);
    assert.equal(parseResultsJson((await ok(await sparqlText({ query: `ASK { ${itemAt(0)} <${EX}label> "zéro" }` }))).results).boolean, false);
    const r = await ok(await sparqlText({ query: `SELECT ?l WHERE { ?s <${EX}label> ?l }`, entailment: 'none', reason: false }));
    assert.deepEqual(parseResultsJson(r.results).rows, [{ l: '"zéro"@fr' }]);
  });

  test('CONSTRUCT and DESCRIBE are refused', async () => {
    for (const query of ['CONSTRUCT WHERE { ?s ?p ?o }', `DESCRIBE ${itemAt(1)}`]) {
      const e = await assertError(await sparqlText({ query }), 400, 'unsupported_query_form');
      assert.equal(e.param, 'query');
    }
  });

  test('bad requests: syntax, JSON, fields, content type', async () => {
    const syntax = await assertError(await sparqlText({ query: 'SELECT * WHERE { ?s ?p }' }), 400, 'sparql_syntax_error');
    assert.equal(syntax.param, 'query');
    await assertError(await sparqlText('{"query": "ASK {}"'), 400, 'invalid_json');
    await assertError(await sparqlText('["ASK {}"]'), 400, 'invalid_json');
    await assertError(await sparqlText(''), 400, 'invalid_json');
    const unknown = await assertError(await sparqlText({ query: 'ASK {}', format: 'json' }), 400, 'unknown_field');
    assert.equal(unknown.param, 'format');
    await assertError(await sparqlText({}), 400, 'missing_query');
    await assertError(await sparqlText({ query: 42 }), 400, 'missing_query');
    for (const limit of [-1, 1.5, '10']) await assertError(await sparqlText({ query: ranked, limit }), 400, 'invalid_field');
    await assertError(await sparqlText({ query: ranked, offset: -3 }), 400, 'invalid_field');
    await assertError(await sparqlText({ query: 'ASK {}', entailment: 'rdfs' }), 400, 'invalid_field');
    await assertError(await sparqlText({ query: 'INSERT DATA { <a:s> <a:p> <a:o> }' }), 400, 'update_not_supported');
    const type = await assertError(await sparqlText({ query: 'ASK {}' }, 'text/plain'), 415, 'unsupported_media_type');
    assert.equal(type.param, 'Content-Type');
    await assertError(await sparqlText({ query: 'ASK {}' }, 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    await assertError(await sparqlText({ query: 'ASK {}' }, 'application/json', '?foo=1'), 400, 'unknown_parameter');
    await assertError(await sparqlText({ query: 'ASK {}' }, 'application/json', '?graph=other'), 404, 'graph_not_found');
  });
});

describe('GET /v1/graph/summary', () => {
  test('counts entities, types, relations and statements', async () => {
    const fresh = await startStackd();
    try {
      const empty = (await (await fresh.fetch('/v1/graph/summary')).json()) as Record<string, unknown>;
      assert.deepEqual(
        [empty.entity_count, empty.current_edge_count, empty.observation_count, empty.entity_types, empty.relations],
        [0, 0, 0, [], []],
      );
      const nt = [
        `<${EX}a> <${RDF_TYPE}> <${LBB}class/person> .`,
        `<${EX}b> <${RDF_TYPE}> <${LBB}class/person> .`,
        `<${EX}c> <${RDF_TYPE}> <${EX}Thing> .`,
        `<${EX}a> <${LBB}r/knows> <${EX}b> .`,
        `<${EX}a> <${EX}name> "A" .`,
        `<${EX}b> <${EX}name> "B" <${EX}g> .`,
      ].join('\n');
      const imp = await importRdf(fresh, nt + '\n', '', 'application/n-quads');
      assert.equal(imp.status, 200, await imp.clone().text());
      const seq = ((await imp.json()) as { committed_commit_seq: number }).committed_commit_seq;
      const res = await fresh.fetch('/v1/graph/summary');
      assert.equal(res.status, 200);
      assertMeta(res);
      const sum = (await res.json()) as {
        snapshot: { commit_seq: number; compacted_seq: number };
        ontology_version: number;
        entity_count: number;
        observation_count: number;
        edge_event_count: number;
        current_edge_count: number;
        entity_types: { name: string; count: number }[];
        relations: { name: string; count: number }[];
      };
      assert.equal(sum.snapshot.commit_seq, seq);
      assert.equal(typeof sum.snapshot.compacted_seq, 'number');
      assert.equal(sum.ontology_version, 0);
      assert.equal(sum.entity_count, 3);
      // rdf:type statements are bookkeeping, not relations between entities
      assert.equal(sum.current_edge_count, 3);
      assert.equal(sum.observation_count, 6);
      assert.equal(sum.edge_event_count, 6);
      assert.deepEqual(sum.entity_types, [
        { name: 'person', count: 2 },
        { name: `${EX}Thing`, count: 1 },
      ]);
      assert.deepEqual(sum.relations, [
        { name: `${EX}name`, count: 2 },
        { name: 'knows', count: 1 },
      ]);
      await assertError(await fresh.fetch('/v1/graph/summary?detail=1'), 400, 'unknown_parameter');
      await assertError(await fresh.fetch('/v1/graph/summary?branch=dev'), 404, 'branch_not_found');
    } finally {
      await fresh.stop();
      removeDir(fresh.dataDir);
    }
  });

  test('agrees with /sparql and /v1/status', async () => {
    const res = await s.fetch('/v1/graph/summary');
    const sum = (await res.json()) as { entity_count: number; current_edge_count: number; snapshot: { commit_seq: number } };
    assert.equal(sum.current_edge_count, await countTriples(s));
    assert.equal(sum.snapshot.commit_seq, await headSeq());
  });
});
