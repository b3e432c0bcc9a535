/**
 * The SPARQL 1.1 Protocol query operation on /sparql, black-box: the three ways to send a
 * query, the dataset parameters, content negotiation in every results and RDF format, the
 * errors, and the answers SPARQL 1.1 requires on data spread over named graphs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startStackd, importRdf, removeDir, type Stackd } from './helpers/server.js';
import {
  assertError,
  assertMeta,
  canonBlank,
  parseCsv,
  parseRdf,
  parseResultsCsv,
  parseResultsJson,
  parseResultsTsv,
  parseResultsXml,
  rawRequest,
  rowSet,
  type Results,
} from './helpers/http.js';

const EX = 'http://example.org/';
const FOAF = 'http://xmlns.com/foaf/0.1/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';
const PREFIXES = `PREFIX ex: <${EX}>\nPREFIX foaf: <${FOAF}>\nPREFIX dc: <http://purl.org/dc/elements/1.1/>\nPREFIX xsd: <${XSD}>\n`;

/** The default graph describes the named graphs; g1 and g2 hold people (W3C spec style). Loaded as N-Quads. */
const NQUADS = `
<${EX}g1> <http://purl.org/dc/elements/1.1/publisher> "Bob Hacker" .
<${EX}g2> <http://purl.org/dc/elements/1.1/publisher> "Alice Hacker" .
<${EX}bob> <${FOAF}name> "Bob" <${EX}g1> .
<${EX}bob> <${FOAF}mbox> <mailto:bob@example.org> <${EX}g1> .
<${EX}bob> <${FOAF}knows> <${EX}alice> <${EX}g1> .
<${EX}bob> <${EX}age> "35"^^<${XSD}integer> <${EX}g1> .
`;
/** Loaded as TriG. */
const TRIG = `
@prefix ex: <${EX}> .
@prefix foaf: <${FOAF}> .
@prefix xsd: <${XSD}> .
ex:g2 {
  ex:alice foaf:name "Alice"@en , "Alicia"@es ;
    foaf:knows ex:carol ;
    ex:age 42 ;
    ex:height 1.68 ;
    ex:born "1983-04-01"^^xsd:date .
  ex:carol foaf:name "Carol" ; foaf:knows _:anon ; ex:age 27 .
  _:anon foaf:name "Anon" .
}
`;
const TOTAL = 16; // 2 in the default graph, 4 in g1, 10 in g2

let s: Stackd;

before(async () => {
  s = await startStackd();
  for (const [body, type] of [
    [NQUADS, 'application/n-quads'],
    [TRIG, 'application/trig'],
  ] as const) {
    const res = await importRdf(s, body, '', type);
    assert.equal(res.status, 200, await res.clone().text());
  }
});

after(async () => {
  await s?.stop();
  if (s) removeDir(s.dataDir);
});

// ---------- request helpers ----------

function get(query: string, accept?: string, extra = ''): Promise<Response> {
  const headers: Record<string, string> = {};
  if (accept !== undefined) headers.accept = accept;
  return s.fetch(`/sparql?query=${encodeURIComponent(query)}${extra}`, { headers });
}

function postForm(form: URLSearchParams, accept = 'application/sparql-results+json', urlQuery = ''): Promise<Response> {
  return s.fetch('/sparql' + urlQuery, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
    body: form.toString(),
  });
}

function postDirect(query: string, accept = 'application/sparql-results+json', urlQuery = '', contentType = 'application/sparql-query'): Promise<Response> {
  return s.fetch('/sparql' + urlQuery, { method: 'POST', headers: { 'content-type': contentType, accept }, body: query });
}

async function json(res: Response): Promise<Results> {
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/sparql-results\+json/);
  assertMeta(res);
  return parseResultsJson(text);
}

async function select(query: string, extra = ''): Promise<Results> {
  return json(await get(PREFIXES + query, 'application/sparql-results+json', extra));
}

/** Values of one variable, in result order. */
function col(r: Results, v: string): (string | undefined)[] {
  return r.rows.map((row) => row[v]);
}

const lit = (v: string, suffix = '') => JSON.stringify(v) + suffix;
const int = (n: number) => `"${n}"^^<${XSD}integer>`;

// ---------- the three ways to send a query ----------

describe('query operation: GET, POST form, POST direct', () => {
  const q = `SELECT ?name WHERE { <${EX}bob> <${FOAF}name> ?name }`;

  test('GET with query in the URL', async () => {
    assert.deepEqual(col(await json(await get(q)), 'name'), [lit('Bob')]);
  });

  test('HEAD answers like GET, without a body', async () => {
    const res = await s.fetch(`/sparql?query=${encodeURIComponent(q)}`, { method: 'HEAD', headers: { accept: 'text/csv' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    assertMeta(res);
    assert.equal(await res.text(), '');
  });

  test('POST application/x-www-form-urlencoded', async () => {
    assert.deepEqual(col(await json(await postForm(new URLSearchParams({ query: q }))), 'name'), [lit('Bob')]);
  });

  test('POST application/sparql-query (direct), charset=utf-8 accepted', async () => {
    assert.deepEqual(col(await json(await postDirect(q)), 'name'), [lit('Bob')]);
    assert.deepEqual(col(await json(await postDirect(q, undefined, '', 'application/sparql-query; charset=UTF-8')), 'name'), [lit('Bob')]);
  });

  test('non-ASCII text survives every way in', async () => {
    const uq = `ASK { FILTER("日本語" = "\\u65E5\\u672C\\u8A9E") }`;
    assert.equal((await json(await get(uq))).boolean, true);
    assert.equal((await json(await postForm(new URLSearchParams({ query: uq })))).boolean, true);
    assert.equal((await json(await postDirect(uq))).boolean, true);
  });
});

// ---------- dataset ----------

describe('RDF dataset', () => {
  const countAll = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
  const names = `SELECT ?name WHERE { ?x <${FOAF}name> ?name }`;
  const graphs = 'SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g';

  test('without a dataset, the default graph is the union of all graphs', async () => {
    assert.deepEqual(col(await select(countAll), 'n'), [int(TOTAL)]);
    assert.deepEqual((await select(names)).rows.length, 5);
  });

  test('GRAPH ?g ranges over the named graphs only', async () => {
    const r = await select('SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g');
    assert.deepEqual(r.rows, [
      { g: `<${EX}g1>`, n: int(4) },
      { g: `<${EX}g2>`, n: int(10) },
    ]);
  });

  test('the W3C example: publisher from the default graph, mbox from the named graph it describes', async () => {
    const r = await select('SELECT ?who ?mbox WHERE { ?g dc:publisher ?who . GRAPH ?g { ?x foaf:mbox ?mbox } }');
    assert.deepEqual(r.rows, [{ who: lit('Bob Hacker'), mbox: '<mailto:bob@example.org>' }]);
  });

  test('FROM in the query text defines the default graph', async () => {
    assert.deepEqual(col(await select(`SELECT ?name FROM ex:g1 WHERE { ?x foaf:name ?name }`), 'name'), [lit('Bob')]);
    const both = await select(`SELECT (COUNT(*) AS ?n) FROM ex:g1 FROM ex:g2 WHERE { ?s ?p ?o }`);
    assert.deepEqual(col(both, 'n'), [int(14)]);
  });

  test('FROM NAMED in the query text: only those named graphs, and an empty default graph', async () => {
    const r = await select(`SELECT ?g ?name FROM NAMED ex:g2 WHERE { GRAPH ?g { ?x foaf:name ?name } }`);
    assert.deepEqual(new Set(col(r, 'g')), new Set([`<${EX}g2>`]));
    assert.deepEqual(new Set(col(r, 'name')), new Set([lit('Alice', '@en'), lit('Alicia', '@es'), lit('Carol'), lit('Anon')]));
    assert.deepEqual(col(await select(`SELECT (COUNT(*) AS ?n) FROM NAMED ex:g2 WHERE { ?s ?p ?o }`), 'n'), [int(0)]);
  });

  test('FROM and FROM NAMED together join across graphs', async () => {
    const r = await select(`SELECT ?n FROM ex:g1 FROM NAMED ex:g2 WHERE { ex:bob foaf:knows ?a . GRAPH ex:g2 { ?a foaf:name ?n } }`);
    assert.deepEqual(new Set(col(r, 'n')), new Set([lit('Alice', '@en'), lit('Alicia', '@es')]));
  });

  test('FROM as a word elsewhere (variable, prefixed name, string) does not switch the union off', async () => {
    const r = await select(`PREFIX from: <${EX}>\nSELECT ?from WHERE { ?from from:age ?a FILTER(?a != "FROM <x>") }`);
    assert.equal(r.rows.length, 3);
  });

  test('default-graph-uri (repeatable) defines the default graph: GET, POST form, POST direct', async () => {
    const g1 = `&default-graph-uri=${encodeURIComponent(EX + 'g1')}`;
    const g2 = `&default-graph-uri=${encodeURIComponent(EX + 'g2')}`;
    assert.deepEqual(col(await select(names, g1), 'name'), [lit('Bob')]);
    assert.deepEqual(col(await select(countAll, g1 + g2), 'n'), [int(14)]);
    const form = new URLSearchParams({ query: names });
    form.append('default-graph-uri', EX + 'g1');
    assert.deepEqual(col(await json(await postForm(form)), 'name'), [lit('Bob')]);
    form.set('query', countAll);
    form.append('default-graph-uri', EX + 'g2');
    assert.deepEqual(col(await json(await postForm(form)), 'n'), [int(14)]);
    assert.deepEqual(col(await json(await postDirect(names, undefined, '?' + g1.slice(1))), 'name'), [lit('Bob')]);
  });

  test('default-graph-uri alone: no named graphs', async () => {
    assert.deepEqual((await select(graphs, `&default-graph-uri=${encodeURIComponent(EX + 'g1')}`)).rows, []);
  });

  test('named-graph-uri (repeatable) defines the named graphs, with an empty default graph', async () => {
    const n1 = `&named-graph-uri=${encodeURIComponent(EX + 'g1')}`;
    const n2 = `&named-graph-uri=${encodeURIComponent(EX + 'g2')}`;
    assert.deepEqual(col(await select(graphs, n1), 'g'), [`<${EX}g1>`]);
    assert.deepEqual(col(await select(graphs, n1 + n2), 'g'), [`<${EX}g1>`, `<${EX}g2>`]);
    assert.deepEqual(col(await select(countAll, n1), 'n'), [int(0)]);
    const form = new URLSearchParams({ query: graphs });
    form.append('named-graph-uri', EX + 'g2');
    assert.deepEqual(col(await json(await postForm(form)), 'g'), [`<${EX}g2>`]);
    assert.deepEqual(col(await json(await postDirect(graphs, undefined, '?' + n2.slice(1))), 'g'), [`<${EX}g2>`]);
  });

  test('protocol dataset overrides FROM / FROM NAMED', async () => {
    const r = await select(`SELECT ?name FROM ex:g2 WHERE { ?x foaf:name ?name }`, `&default-graph-uri=${encodeURIComponent(EX + 'g1')}`);
    assert.deepEqual(col(r, 'name'), [lit('Bob')]);
    const n = await select(`SELECT DISTINCT ?g FROM NAMED ex:g2 WHERE { GRAPH ?g { ?s ?p ?o } }`, `&named-graph-uri=${encodeURIComponent(EX + 'g1')}`);
    assert.deepEqual(col(n, 'g'), [`<${EX}g1>`]);
  });

  test('a dataset IRI that is not absolute is refused', async () => {
    await assertError(await get(countAll, undefined, '&default-graph-uri=g1'), 400, 'invalid_graph_uri');
  });
});

// ---------- what SPARQL 1.1 requires ----------

describe('SPARQL 1.1 answers', () => {
  test('OPTIONAL leaves unbound what has no match', async () => {
    const r = await select('SELECT DISTINCT ?x ?mbox WHERE { ?x foaf:name ?n OPTIONAL { ?x foaf:mbox ?mbox } }');
    assert.equal(r.rows.length, 4);
    const withMbox = r.rows.filter((row) => row.mbox !== undefined);
    assert.deepEqual(withMbox, [{ x: `<${EX}bob>`, mbox: '<mailto:bob@example.org>' }]);
  });

  test('FILTER on numbers, language and strings', async () => {
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x ex:age ?a FILTER(?a > 30) } ORDER BY ?x'), 'x'), [`<${EX}alice>`, `<${EX}bob>`]);
    assert.deepEqual(col(await select('SELECT ?n WHERE { ex:alice foaf:name ?n FILTER(langMatches(lang(?n), "es")) }'), 'n'), [lit('Alicia', '@es')]);
    assert.deepEqual((await select('SELECT ?x WHERE { ?x foaf:name ?n FILTER(?n = "Alice") }')).rows, [], 'a plain literal is not a language-tagged one');
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x foaf:name ?n FILTER(str(?n) = "Alice") }'), 'x'), [`<${EX}alice>`]);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x foaf:name ?n FILTER(regex(?n, "^a", "i") && !isBlank(?x)) } ORDER BY ?n'), 'x'), [
      `<${EX}alice>`,
      `<${EX}alice>`,
    ]);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x foaf:name ?n FILTER NOT EXISTS { ?x ex:age ?a } }'), 'x').length, 1);
  });

  test('UNION', async () => {
    const r = await select('SELECT ?v WHERE { { ex:bob foaf:mbox ?v } UNION { ex:alice ex:height ?v } }');
    assert.deepEqual(new Set(col(r, 'v')), new Set(['<mailto:bob@example.org>', `"1.68"^^<${XSD}decimal>`]));
  });

  test('ORDER BY, LIMIT, OFFSET', async () => {
    const r = await select('SELECT ?x ?a WHERE { ?x ex:age ?a } ORDER BY DESC(?a)');
    assert.deepEqual(r.rows, [
      { x: `<${EX}alice>`, a: int(42) },
      { x: `<${EX}bob>`, a: int(35) },
      { x: `<${EX}carol>`, a: int(27) },
    ]);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x ex:age ?a } ORDER BY ?a LIMIT 1 OFFSET 1'), 'x'), [`<${EX}bob>`]);
  });

  test('aggregates: COUNT, SUM, MIN, MAX, AVG, GROUP BY, HAVING, GROUP_CONCAT', async () => {
    const r = await select('SELECT (COUNT(?x) AS ?n) (SUM(?a) AS ?sum) (MIN(?a) AS ?min) (MAX(?a) AS ?max) (AVG(?a) AS ?avg) WHERE { ?x ex:age ?a }');
    const row = r.rows[0]!;
    assert.equal(row.n, int(3));
    assert.equal(row.sum, int(104));
    assert.equal(row.min, int(27));
    assert.equal(row.max, int(42));
    const avg = /^"([^"]+)"\^\^<(.*)>$/.exec(row.avg!)!;
    assert.equal(avg[2], XSD + 'decimal');
    assert.ok(Math.abs(Number(avg[1]) - 104 / 3) < 1e-9);
    const h = await select('SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g HAVING (COUNT(*) > 5)');
    assert.deepEqual(h.rows, [{ g: `<${EX}g2>`, n: int(10) }]);
    const gc = await select('SELECT (GROUP_CONCAT(?n; separator="|") AS ?all) WHERE { SELECT ?n WHERE { ex:alice foaf:name ?n } ORDER BY ?n }');
    assert.deepEqual(new Set(JSON.parse(gc.rows[0]!.all!).split('|')), new Set(['Alice', 'Alicia']));
  });

  test('property paths: sequence, one-or-more, zero-or-more, inverse, alternative', async () => {
    assert.deepEqual(new Set(col(await select('SELECT ?n WHERE { ex:bob foaf:knows/foaf:name ?n }'), 'n')), new Set([lit('Alice', '@en'), lit('Alicia', '@es')]));
    const plus = await select('SELECT ?y WHERE { ex:bob foaf:knows+ ?y }');
    assert.equal(plus.rows.length, 3);
    assert.deepEqual(new Set(col(plus, 'y').filter((y) => !y!.startsWith('_:'))), new Set([`<${EX}alice>`, `<${EX}carol>`]));
    assert.equal((await select('SELECT ?y WHERE { ex:bob foaf:knows* ?y }')).rows.length, 4);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ex:carol ^foaf:knows ?x }'), 'x'), [`<${EX}alice>`]);
    assert.deepEqual(new Set(col(await select('SELECT ?v WHERE { ?x foaf:mbox|ex:height ?v }'), 'v')), new Set(['<mailto:bob@example.org>', `"1.68"^^<${XSD}decimal>`]));
    assert.deepEqual(col(await select('SELECT ?n WHERE { ex:carol foaf:knows/foaf:name ?n }'), 'n'), [lit('Anon')]);
  });

  test('typed literals keep their datatype and compare by value', async () => {
    const r = await select('SELECT ?d (DATATYPE(?d) AS ?t) WHERE { ex:alice ex:born ?d }');
    assert.deepEqual(r.rows, [{ d: `"1983-04-01"^^<${XSD}date>`, t: `<${XSD}date>` }]);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x ex:age 42 }'), 'x'), [`<${EX}alice>`]);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x ex:age "42.0"^^xsd:decimal }'), 'x'), [], 'pattern matching is by term, not value');
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x ex:age ?a FILTER(?a = 42.0) }'), 'x'), [`<${EX}alice>`]);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x ex:born ?d FILTER(?d < "2000-01-01"^^xsd:date) }'), 'x'), [`<${EX}alice>`]);
    assert.deepEqual(col(await select('SELECT ?h WHERE { ex:alice ex:height ?h FILTER(datatype(?h) = xsd:decimal) }'), 'h'), [`"1.68"^^<${XSD}decimal>`]);
  });

  test('language tags', async () => {
    const r = await select('SELECT ?n (LANG(?n) AS ?l) WHERE { ex:alice foaf:name ?n } ORDER BY ?l');
    assert.deepEqual(r.rows, [
      { n: lit('Alice', '@en'), l: lit('en') },
      { n: lit('Alicia', '@es'), l: lit('es') },
    ]);
    assert.deepEqual(col(await select('SELECT ?x WHERE { ?x foaf:name "Alicia"@es }'), 'x'), [`<${EX}alice>`]);
  });

  test('ASK true and false', async () => {
    assert.equal((await select('ASK { ex:bob foaf:knows ex:alice }')).boolean, true);
    assert.equal((await select('ASK { ex:alice foaf:knows ex:bob }')).boolean, false);
  });
});

// ---------- content negotiation ----------

/** The one query whose answer every results format must carry: IRIs, a blank node, plain, language-tagged and typed literals, an unbound. */
const FORMAT_QUERY = `${PREFIXES}SELECT ?x ?name ?age WHERE { GRAPH ex:g2 { ?x foaf:name ?name OPTIONAL { ?x ex:age ?age } } }`;
const FORMAT_ROWS: Record<string, string>[] = [
  { x: `<${EX}alice>`, name: lit('Alice', '@en'), age: int(42) },
  { x: `<${EX}alice>`, name: lit('Alicia', '@es'), age: int(42) },
  { x: `<${EX}carol>`, name: lit('Carol'), age: int(27) },
  { x: '_:anon', name: lit('Anon') },
];

function sameRows(actual: Record<string, string>[], expected: Record<string, string>[]) {
  assert.deepEqual(canonBlank(rowSet(actual)), canonBlank(rowSet(expected)));
}

describe('content negotiation: SELECT and ASK', () => {
  test('no Accept header and */* answer SPARQL JSON', async () => {
    const none = await rawRequest(s, 'GET', '/sparql?query=' + encodeURIComponent(FORMAT_QUERY), {});
    assert.equal(none.status, 200);
    assert.match(none.headers.get('content-type')!, /^application\/sparql-results\+json/);
    sameRows(parseResultsJson(await none.text()).rows, FORMAT_ROWS);
    const any = await get(FORMAT_QUERY, '*/*');
    assert.match(any.headers.get('content-type')!, /^application\/sparql-results\+json/);
    sameRows((await json(any)).rows, FORMAT_ROWS);
  });

  test('application/sparql-results+json', async () => {
    const r = await json(await get(FORMAT_QUERY, 'application/sparql-results+json'));
    assert.deepEqual(r.vars, ['x', 'name', 'age']);
    sameRows(r.rows, FORMAT_ROWS);
  });

  test('application/sparql-results+xml', async () => {
    const res = await get(FORMAT_QUERY, 'application/sparql-results+xml');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^application\/sparql-results\+xml/);
    const r = parseResultsXml(await res.text());
    assert.deepEqual(r.vars, ['x', 'name', 'age']);
    sameRows(r.rows, FORMAT_ROWS);
  });

  test('text/tab-separated-values', async () => {
    const res = await get(FORMAT_QUERY, 'text/tab-separated-values');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/tab-separated-values/);
    const r = parseResultsTsv(await res.text());
    assert.deepEqual(r.vars, ['x', 'name', 'age']);
    sameRows(r.rows, FORMAT_ROWS);
  });

  test('text/csv carries the values', async () => {
    const res = await get(FORMAT_QUERY, 'text/csv');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/csv/);
    const r = parseResultsCsv(await res.text());
    assert.deepEqual(r.vars, ['x', 'name', 'age']);
    const values = FORMAT_ROWS.map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v.startsWith('<') ? v.slice(1, -1) : v.startsWith('_:') ? v : JSON.parse(v.replace(/(@\w+|\^\^<.*>)$/, ''))])),
    );
    assert.deepEqual(canonBlank(rowSet(r.rows)), canonBlank(rowSet(values)));
  });

  test('CSV quotes values with commas, quotes and newlines', async () => {
    const res = await get('SELECT ?v WHERE { VALUES ?v { "a,b" "say \\"hi\\"" "two\\nlines" } }', 'text/csv');
    const rows = parseCsv(await res.text());
    assert.deepEqual(rows.slice(1).map((r) => r[0]), ['a,b', 'say "hi"', 'two\nlines']);
  });

  test('ASK true and false in every results format', async () => {
    for (const [answer, q] of [
      [true, 'ASK { ?s ?p ?o }'],
      [false, `ASK { <${EX}nobody> ?p ?o }`],
    ] as const) {
      assert.equal((await json(await get(q, 'application/sparql-results+json'))).boolean, answer);
      const xml = await get(q, 'application/sparql-results+xml');
      assert.match(xml.headers.get('content-type')!, /^application\/sparql-results\+xml/);
      assert.equal(parseResultsXml(await xml.text()).boolean, answer);
      for (const type of ['text/csv', 'text/tab-separated-values']) {
        const res = await get(q, type);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type')!, new RegExp('^' + type));
        assert.equal((await res.text()).trim(), String(answer));
      }
    }
  });

  test('q-values and wildcards', async () => {
    const cases: [string, RegExp][] = [
      ['text/csv;q=0.5, application/sparql-results+xml', /^application\/sparql-results\+xml/],
      ['text/*', /^text\/csv/],
      ['application/*', /^application\/sparql-results\+json/],
      ['text/csv;q=0.1, text/tab-separated-values;q=0.9', /^text\/tab-separated-values/],
      ['*/*;q=0.1, text/tab-separated-values;q=0.2', /^text\/tab-separated-values/],
      ['application/sparql-results+json;q=0, */*', /^application\/sparql-results\+xml/],
      ['text/csv; charset=utf-8', /^text\/csv/],
      ['application/sparql-results+json; charset=UTF-8', /^application\/sparql-results\+json/],
      ['application/json', /^application\/json/],
      ['image/png, text/csv;q=0.01', /^text\/csv/],
    ];
    for (const [accept, want] of cases) {
      const res = await get('SELECT * WHERE { ?s ?p ?o } LIMIT 1', accept);
      assert.equal(res.status, 200, `Accept: ${accept}`);
      assert.match(res.headers.get('content-type')!, want, `Accept: ${accept}`);
      await res.arrayBuffer();
    }
  });
});

describe('content negotiation: CONSTRUCT and DESCRIBE', () => {
  const construct = `${PREFIXES}CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ex:g2 { ?s ?p ?o } }`;
  const expected = canonBlank([
    `<${EX}alice> <${FOAF}name> ${lit('Alice', '@en')}`,
    `<${EX}alice> <${FOAF}name> ${lit('Alicia', '@es')}`,
    `<${EX}alice> <${FOAF}knows> <${EX}carol>`,
    `<${EX}alice> <${EX}age> ${int(42)}`,
    `<${EX}alice> <${EX}height> "1.68"^^<${XSD}decimal>`,
    `<${EX}alice> <${EX}born> "1983-04-01"^^<${XSD}date>`,
    `<${EX}carol> <${FOAF}name> ${lit('Carol')}`,
    `<${EX}carol> <${FOAF}knows> _:anon`,
    `<${EX}carol> <${EX}age> ${int(27)}`,
    `_:anon <${FOAF}name> ${lit('Anon')}`,
  ]);

  async function graphIn(accept: string | undefined, type: string): Promise<string[]> {
    const res = accept === undefined ? await rawRequest(s, 'GET', '/sparql?query=' + encodeURIComponent(construct), {}) : await get(construct, accept);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(res.headers.get('content-type')!.split(';')[0], type);
    assertMeta(res);
    return canonBlank(parseRdf(text, type));
  }

  test('no Accept and */* answer Turtle', async () => {
    assert.deepEqual(await graphIn(undefined, 'text/turtle'), expected);
    assert.deepEqual(await graphIn('*/*', 'text/turtle'), expected);
  });

  for (const type of ['text/turtle', 'application/n-triples', 'application/n-quads', 'application/trig', 'application/rdf+xml', 'application/ld+json']) {
    test(`${type}: the same triples, datatypes, language tags and blank node`, async () => {
      assert.deepEqual(await graphIn(type, type), expected);
    });
  }

  test('JSON-LD carries @language and @type', async () => {
    const res = await get(construct, 'application/ld+json');
    const doc = JSON.stringify(await res.json());
    assert.match(doc, /"@language":"es"/);
    assert.match(doc, /"@type":"http:\/\/www\.w3\.org\/2001\/XMLSchema#date"/);
  });

  test('q-values and wildcards pick the RDF syntax', async () => {
    assert.deepEqual(await graphIn('application/n-triples;q=0.5, text/turtle;q=0.4', 'application/n-triples'), expected);
    assert.deepEqual(await graphIn('text/*', 'text/turtle'), expected);
    assert.deepEqual(await graphIn('text/turtle; charset=utf-8', 'text/turtle'), expected);
    assert.deepEqual(await graphIn('application/sparql-results+json;q=1, application/trig;q=0.2', 'application/trig'), expected);
  });

  test('DESCRIBE returns the resource description', async () => {
    const res = await get(`${PREFIXES}DESCRIBE ex:bob`, 'application/n-triples');
    assert.equal(res.status, 200);
    const got = parseRdf(await res.text(), 'application/n-triples');
    assert.deepEqual(new Set(got), new Set([
      `<${EX}bob> <${FOAF}name> ${lit('Bob')}`,
      `<${EX}bob> <${FOAF}mbox> <mailto:bob@example.org>`,
      `<${EX}bob> <${FOAF}knows> <${EX}alice>`,
      `<${EX}bob> <${EX}age> ${int(35)}`,
    ]));
  });
});

// ---------- errors ----------

describe('errors', () => {
  const q = 'SELECT * WHERE { ?s ?p ?o } LIMIT 1';

  test('406 when no acceptable media type', async () => {
    await assertError(await get(q, 'image/png'), 406, 'not_acceptable');
    await assertError(await get(q, 'text/csv;q=0'), 406, 'not_acceptable');
    await assertError(await get(q, 'text/csv; charset=iso-8859-1'), 406, 'not_acceptable');
    await assertError(await get('CONSTRUCT WHERE { ?s ?p ?o }', 'application/sparql-results+json'), 406, 'not_acceptable');
    await assertError(await get('ASK {}', 'text/turtle'), 406, 'not_acceptable');
  });

  test('415 for a POST that is neither a form nor a SPARQL query', async () => {
    const e = await assertError(await postDirect(q, undefined, '', 'text/plain'), 415, 'unsupported_media_type');
    assert.equal(e.param, 'Content-Type');
    const bytes = new TextEncoder().encode(q); // fetch sends no Content-Type for bytes
    await assertError(await s.fetch('/sparql', { method: 'POST', body: bytes }), 415, 'unsupported_media_type');
    await assertError(await postDirect('INSERT DATA { <a:s> <a:p> <a:o> }', undefined, '', 'application/sparql-update'), 415, 'unsupported_media_type');
    await assertError(await postDirect(q, undefined, '', 'application/json'), 415, 'unsupported_media_type');
  });

  test('415 for a charset other than UTF-8', async () => {
    await assertError(await postDirect(q, undefined, '', 'application/sparql-query; charset=ISO-8859-1'), 415, 'unsupported_charset');
    const form = s.fetch('/sparql', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=windows-1252' },
      body: 'query=' + encodeURIComponent(q),
    });
    await assertError(await form, 415, 'unsupported_charset');
  });

  test('400 for bytes that are not UTF-8', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('ASK { ?s ?p "caf'), 0xe9, ...new TextEncoder().encode('" }')]);
    await assertError(await s.fetch('/sparql', { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: bytes }), 400, 'invalid_encoding');
    // percent-escapes of Latin-1, not UTF-8: refused rather than read as U+FFFD (which would match nothing)
    const latin1 = 'query=ASK%7B%3Fs%20%3Fp%20%22caf%E9%22%7D';
    assert.equal((await assertError(await s.fetch('/sparql?' + latin1), 400, 'invalid_encoding')).param, 'query');
    const form = await s.fetch('/sparql', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: latin1 });
    await assertError(form, 400, 'invalid_encoding');
    // while UTF-8 escapes and + for space are read as usual
    const utf8 = await s.fetch('/sparql?query=ASK+%7B+FILTER(%22caf%C3%A9%22+%3D+%22caf%5Cu00E9%22)+%7D');
    assert.equal((await json(utf8)).boolean, true);
  });

  test('400 for a syntax error, with the parser message, whatever the Accept', async () => {
    const e = await assertError(await get('SELECT * WHERE { ?s ?p }'), 400, 'sparql_syntax_error');
    assert.equal(e.param, 'query');
    assert.match(e.message, /1:2\d/, 'the parser position');
    await assertError(await postDirect('SELEKT * WHERE { ?s ?p ?o }'), 400, 'sparql_syntax_error');
    await assertError(await get('CONSTRUK WHERE { ?s ?p ?o }', 'text/turtle'), 400, 'sparql_syntax_error');
    await assertError(await postForm(new URLSearchParams({ query: 'ASK { FILTER( }' })), 400, 'sparql_syntax_error');
  });

  test('400 for several query values', async () => {
    const twice = await s.fetch(`/sparql?query=${encodeURIComponent(q)}&query=${encodeURIComponent(q)}`);
    assert.equal((await assertError(twice, 400, 'multiple_queries')).param, 'query');
    const formTwice = new URLSearchParams({ query: q });
    formTwice.append('query', q);
    await assertError(await postForm(formTwice), 400, 'multiple_queries');
    await assertError(await postForm(new URLSearchParams({ query: q }), undefined, '?query=' + encodeURIComponent(q)), 400, 'multiple_queries');
    await assertError(await postDirect(q, undefined, '?query=' + encodeURIComponent(q)), 400, 'multiple_queries');
  });

  test('400 for a missing query', async () => {
    await assertError(await s.fetch('/sparql'), 400, 'missing_query');
    await assertError(await s.fetch('/sparql?query='), 400, 'missing_query');
    await assertError(await postForm(new URLSearchParams({ 'default-graph-uri': EX + 'g1' })), 400, 'missing_query');
    await assertError(await postDirect(''), 400, 'missing_query');
  });

  test('400 for SPARQL Update sent as a query', async () => {
    await assertError(await postDirect('INSERT DATA { <a:s> <a:p> <a:o> }'), 400, 'update_not_supported');
    await assertError(await postForm(new URLSearchParams({ update: 'INSERT DATA { <a:s> <a:p> <a:o> }' })), 400, 'update_not_supported');
  });

  test('405 for other methods, with Allow', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const res = await s.fetch('/sparql?query=' + encodeURIComponent(q), { method, headers: { 'content-type': 'application/sparql-query' }, body: q });
      assert.match(res.headers.get('allow') ?? '', /GET.*POST/);
      await assertError(res, 405, 'method_not_allowed');
    }
  });

  test('400 unknown_parameter, in the URL and in the form body', async () => {
    const e = await assertError(await get(q, undefined, '&foo=bar'), 400, 'unknown_parameter');
    assert.equal(e.param, 'foo');
    const form = new URLSearchParams({ query: q, 'default-graph': EX + 'g1' });
    assert.equal((await assertError(await postForm(form), 400, 'unknown_parameter')).param, 'default-graph');
  });

  test('404 for another graph or branch, naming the fixed ones', async () => {
    for (const send of [(extra: string) => get(q, undefined, extra), (extra: string) => postForm(new URLSearchParams('query=' + encodeURIComponent(q) + extra))]) {
      const g = await assertError(await send('&graph=other'), 404, 'graph_not_found');
      assert.equal(g.param, 'graph');
      assert.match(g.message, /"other"/);
      assert.match(g.message, /graph "main"/);
      assert.match(g.message, /branch "main"/);
      const b = await assertError(await send('&branch=other'), 404, 'branch_not_found');
      assert.equal(b.param, 'branch');
      assert.match(b.message, /branch "main"/);
      const ok = await send('&graph=main&branch=main');
      assert.equal(ok.status, 200);
      await ok.arrayBuffer();
    }
  });

  test('the client request id is echoed', async () => {
    const res = await s.fetch('/sparql?query=' + encodeURIComponent('ASK {'), { headers: { 'x-request-id': 'client-id-42' } });
    const e = await assertError(res, 400, 'sparql_syntax_error');
    assert.equal(e.request_id, 'client-id-42');
  });
});

// Oxigraph 0.5.11 evaluates the union default graph (and FROM g1 FROM g2) without the RDF
// merge's deduplication: a triple held in two graphs matches twice (oxigraph#1919, fixed
// upstream by oxigraph#1920). Skipped, with the reason in the report, until the engine is
// upgraded; last in this file since it adds data.
test('a triple in several graphs is one triple of the union default graph', { skip: 'oxigraph 0.5.11 counts it once per graph (oxigraph#1919)' }, async () => {
  const dup = `<${EX}dup> <${EX}p> "v" <${EX}d1> .\n<${EX}dup> <${EX}p> "v" <${EX}d2> .\n`;
  assert.equal((await importRdf(s, dup, '', 'application/n-quads')).status, 200);
  assert.deepEqual(col(await select(`SELECT (COUNT(*) AS ?n) WHERE { ex:dup ?p ?o }`), 'n'), [int(1)]);
});
