import type { Hono } from 'hono';
import type { AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { ApiError, badRequest } from '../errors.js';
import { mediaType, readBodyLimited } from '../body.js';
import { Params, parseRfc3339 } from '../params.js';
import { isAbsoluteIri } from '../../model/rdf-terms.js';
import type { RdfImportParams } from '../../store/writer-protocol.js';

const FORMAT_NAMES: Record<string, RdfImportParams['format']> = {
  ntriples: 'ntriples', nt: 'ntriples', 'n-triples': 'ntriples',
  turtle: 'turtle', ttl: 'turtle',
  nquads: 'nquads', nq: 'nquads', 'n-quads': 'nquads',
  trig: 'trig',
};
const CONTENT_TYPES: Record<string, RdfImportParams['format']> = {
  'application/n-triples': 'ntriples',
  'text/turtle': 'turtle',
  'application/x-turtle': 'turtle',
  'application/n-quads': 'nquads',
  'text/x-nquads': 'nquads',
  'application/trig': 'trig',
};
/** Content types that say nothing about the RDF syntax: `format` (default ntriples) decides. */
const NEUTRAL_TYPES = new Set(['text/plain', 'application/octet-stream']);

const KNOWN = ['batch', 'strict', 'observed_at', 'edge_idempotency', 'format', 'base_iri', 'graph_uri', 'blank_node_scope', 'resource_type', 'build'];

/** Which RDF syntax the body is in: `format` wins, then Content-Type, then N-Triples. */
function resolveFormat(p: Params, contentType: string | null): RdfImportParams['format'] {
  const f = p.string('format');
  if (f !== null && f !== '') {
    const format = FORMAT_NAMES[f.toLowerCase()];
    if (!format) throw badRequest('invalid_parameter', `format must be one of ntriples, turtle, nquads, trig; got "${f}"`, 'format');
    return format;
  }
  if (contentType === null || NEUTRAL_TYPES.has(contentType)) return 'ntriples';
  const byType = CONTENT_TYPES[contentType];
  if (!byType) {
    throw new ApiError(415, 'invalid_request_error', 'unsupported_media_type',
      `cannot import ${contentType}; send application/n-triples, text/turtle, application/n-quads or application/trig (or set format=)`, { param: 'Content-Type' });
  }
  return byType;
}

/** POST /v1/graph/import/rdf */
export function rdfImportRoutes(app: Hono<Env>, ctx: AppContext) {
  app.post('/v1/graph/import/rdf', async (c) => {
    const p = new Params(new URL(c.req.url).searchParams, KNOWN);
    const { type, charset } = mediaType(c.req.header('content-type'));
    if (charset && charset !== 'utf-8' && charset !== 'utf8') {
      throw new ApiError(415, 'invalid_request_error', 'unsupported_charset', `RDF must be sent as UTF-8, not ${charset}`, { param: 'Content-Type' });
    }
    const format = resolveFormat(p, type);
    const baseIri = p.string('base_iri') || null;
    if (baseIri !== null && !isAbsoluteIri(baseIri)) throw badRequest('invalid_parameter', `base_iri must be an absolute IRI; got "${baseIri}"`, 'base_iri');
    const graphUri = p.string('graph_uri') || null;
    if (graphUri !== null) {
      if (!isAbsoluteIri(graphUri)) throw badRequest('invalid_parameter', `graph_uri must be an absolute IRI; got "${graphUri}"`, 'graph_uri');
      if (format === 'nquads' || format === 'trig') {
        throw badRequest('invalid_parameter', 'graph_uri applies to N-Triples and Turtle; N-Quads and TriG name their graphs in the data', 'graph_uri');
      }
    }
    const blankNodeScope = p.string('blank_node_scope') || null;
    const observed = p.string('observed_at');
    const params: RdfImportParams = {
      format,
      baseIri,
      graphUri,
      blankNodeScope,
      strict: p.bool('strict', false),
      build: p.bool('build', true),
      observedAt: observed ? parseRfc3339(observed, 'observed_at') : null,
      batch: p.int('batch', 1, 1_000_000),
      edgeIdempotency: p.oneOf('edge_idempotency', ['skip_unchanged', 'append'] as const, 'skip_unchanged'),
      resourceType: p.string('resource_type') || null,
    };
    const key = c.req.header('idempotency-key') ?? null;
    if (key !== null && (key.length === 0 || key.length > 255)) {
      throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 characters', 'Idempotency-Key');
    }
    const body = await readBodyLimited(c, ctx.config.maxImportBytes);
    const out = await ctx.writer.importRdf(body, params, key);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (out.replayed) headers['idempotent-replayed'] = 'true';
    return new Response(JSON.stringify(out.body), { status: out.status, headers });
  });
}
