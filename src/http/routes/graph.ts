import type { Hono } from 'hono';
import type { AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { Params } from '../params.js';
import { checkReadParams } from '../read-params.js';
import { exportStream, countLiveStatements, exportPreview, EXPORT_FORMATS } from '../../query/export.js';
import { ApiError } from '../errors.js';
import { localName } from '../../model/triplets.js';

type Binding = Record<string, { type: string; value: string }>;

async function select(ctx: AppContext, query: string): Promise<{ rows: Binding[]; seq: number }> {
  const r = await ctx.heads.query({ query, resultsFormat: 'application/sparql-results+json', union: true });
  if (!r.ok) throw new Error(r.message);
  return { rows: (JSON.parse(r.body) as { results: { bindings: Binding[] } }).results.bindings, seq: r.seq };
}

/** Short names for the generic schema's IRIs; other IRIs are shown whole. */
function shortName(iri: string, prefix: string): string {
  return iri.startsWith(prefix) ? iri.slice(prefix.length) : iri;
}

export function graphRoutes(app: Hono<Env>, ctx: AppContext) {
  app.get('/v1/graph/summary', async (c) => {
    new Params(new URL(c.req.url).searchParams, []);
    const base = ctx.config.iriBase;
    // Relations are the statements between resources and values that are not the generic
    // schema's bookkeeping (type, label, entity properties).
    const notBookkeeping = `FILTER(?p != <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> && ?p != <http://www.w3.org/2000/01/rdf-schema#label> && !STRSTARTS(STR(?p), "${base}p/"))`;
    const [entities, types, relations, adjacency] = await Promise.all([
      select(ctx, 'SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?o }'),
      select(ctx, 'SELECT ?t (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?t } GROUP BY ?t ORDER BY DESC(?n) ?t'),
      select(ctx, `SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o ${notBookkeeping} } GROUP BY ?p ORDER BY DESC(?n) ?p`),
      select(ctx, `SELECT ?st ?p ?tt (COUNT(*) AS ?n) WHERE { ?s ?p ?o . ?s a ?st . ?o a ?tt . FILTER(STRSTARTS(STR(?p), "${base}r/")) } GROUP BY ?st ?p ?tt ORDER BY DESC(?n)`),
    ]);
    const totals = ctx.readDb
      .prepare(
        `SELECT (SELECT COUNT(*) FROM observations) AS observations, (SELECT COUNT(*) FROM edge_events) AS edge_events,
                (SELECT COALESCE(SUM(added + removed), 0) FROM commits WHERE kind = 'rdf_import') AS rdf_events,
                (SELECT COALESCE(SUM(added), 0) FROM commits WHERE kind = 'rdf_import') AS rdf_added`,
      )
      .get() as { observations: number; edge_events: number; rdf_events: number; rdf_added: number };
    // Display names of the generic schema's classes, as the writers spelled them.
    const display = new Map<string, string>();
    for (const r of ctx.readDb.prepare('SELECT DISTINCT type FROM entities').all() as { type: string }[]) display.set(localName(r.type), r.type);
    const typeName = (iri: string) => {
      const short = shortName(iri, `${base}class/`);
      return iri.startsWith(`${base}class/`) ? display.get(short) ?? decodeURIComponent(short) : short;
    };
    const relName = (iri: string) => (iri.startsWith(`${base}r/`) ? decodeURIComponent(iri.slice(base.length + 2)) : iri);
    const current = relations.rows.reduce((n, r) => n + Number(r.n!.value), 0);
    const seq = Math.max(entities.seq, types.seq, relations.seq);
    return c.json({
      snapshot: { commit_seq: seq, compacted_seq: seq, served_at_seq: Math.min(seq, ctx.servedAtSeq()) },
      ontology_version: 0,
      entity_count: Number(entities.rows[0]?.n?.value ?? 0),
      observation_count: totals.observations + totals.rdf_added,
      edge_event_count: totals.edge_events + totals.rdf_events,
      current_edge_count: current,
      entity_types: types.rows.map((r) => ({ name: typeName(r.t!.value), count: Number(r.n!.value) })),
      relations: relations.rows.map((r) => ({ name: relName(r.p!.value), count: Number(r.n!.value) })),
      relation_adjacency: adjacency.rows.map((r) => ({
        relation: relName(r.p!.value), source_type: typeName(r.st!.value), target_type: typeName(r.tt!.value), count: Number(r.n!.value),
      })),
    });
  });

  app.get('/v1/graph/export/rdf', async (c) => {
    const search = new URL(c.req.url).searchParams;
    const p = new Params(search, ['format', 'max_triples', 'truncate', 'as_of_valid_time', 'as_of_commit_seq', 'entailment', 'reason']);
    const name = (p.string('format') || 'turtle').toLowerCase();
    const format = EXPORT_FORMATS[name];
    if (!format) throw new ApiError(400, 'invalid_request_error', 'invalid_parameter', `format must be one of turtle, nt, ntriples, trig, nq, nquads; got "${name}"`, { param: 'format' });
    const maxTriples = p.int('max_triples', 0, Number.MAX_SAFE_INTEGER);
    const truncate = p.bool('truncate', false);
    const target = await checkReadParams(ctx, search);
    const seq = target.head;
    const pin = target.pin.pinned ? target.pin : null;
    if (truncate) {
      const preview = exportPreview(ctx.config.dataDir, format, maxTriples ?? 1000, pin);
      return c.json({ snapshot: { commit_seq: seq, compacted_seq: seq, served_at_seq: seq, as_of_commit_seq: pin ? pin.seq : null }, format: format.name, ...preview });
    }
    if (maxTriples !== null) {
      const total = countLiveStatements(ctx.readDb, format, pin);
      if (total > maxTriples) {
        throw new ApiError(413, 'invalid_request_error', 'export_too_large',
          `the export has ${total} statements, more than max_triples=${maxTriples}; raise max_triples or use truncate=true for a preview`, { param: 'max_triples' });
      }
    }
    return new Response(exportStream(ctx.config.dataDir, format, pin), {
      status: 200,
      headers: { 'content-type': `${format.mediaType}; charset=utf-8`, 'x-stackd-commit-seq': String(seq) },
    });
  });
}
