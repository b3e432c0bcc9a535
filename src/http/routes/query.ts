import type { Hono } from 'hono';
import type { AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { badRequest } from '../errors.js';
import { mediaType, parseJsonObject, readBodyLimited } from '../body.js';
import { Params } from '../params.js';
import { runSparql } from '../../query/sparql.js';
import { checkReadParams, READ_PARAMS } from '../read-params.js';
import { ApiError } from '../errors.js';

const FIELDS = ['query', 'limit', 'offset', 'entailment', 'reason'];

function optionalCount(body: Record<string, unknown>, name: string): number | null {
  const v = body[name];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw badRequest('invalid_field', `"${name}" must be a non-negative integer`, name);
  return v;
}

export function requireJson(contentType: string | undefined) {
  const { type } = mediaType(contentType);
  if (type !== 'application/json' && !(type ?? '').endsWith('+json')) {
    throw new ApiError(415, 'invalid_request_error', 'unsupported_media_type', `this route takes application/json, not ${type ?? 'a body without Content-Type'}`, { param: 'Content-Type' });
  }
}

/** POST /v1/query/sparql-text — SELECT/ASK from text; the SPARQL JSON results carried as a string. */
export function queryRoutes(app: Hono<Env>, ctx: AppContext) {
  app.post('/v1/query/sparql-text', async (c) => {
    const search = new URL(c.req.url).searchParams;
    new Params(search, READ_PARAMS);
    requireJson(c.req.header('content-type'));
    const body = parseJsonObject(await readBodyLimited(c, ctx.config.maxQueryBytes));
    for (const k of Object.keys(body)) {
      if (!FIELDS.includes(k)) throw badRequest('unknown_field', `unknown field "${k}" (accepted: ${FIELDS.join(', ')})`, k);
    }
    if (typeof body.query !== 'string' || body.query.trim() === '') throw badRequest('missing_query', '"query" must be a non-empty string', 'query');
    const limit = optionalCount(body, 'limit');
    const offset = optionalCount(body, 'offset') ?? 0;
    if (body.entailment !== undefined && body.entailment !== null && body.entailment !== 'none' && body.entailment !== 'subclass') {
      throw badRequest('invalid_field', '"entailment" must be none or subclass', 'entailment');
    }
    if (body.reason !== undefined && typeof body.reason !== 'boolean') throw badRequest('invalid_field', '"reason" must be a boolean', 'reason');
    const read = new URLSearchParams(search);
    if (body.entailment) read.set('entailment', String(body.entailment));
    if (body.reason === true) read.set('reason', 'true');
    const target = await checkReadParams(ctx, read);

    const result = await runSparql(target, ctx.config.unionDefaultGraph, {
      query: body.query,
      resultsFormat: 'application/sparql-results+json',
      allowedForms: ['SELECT', 'ASK'],
    });
    const doc = JSON.parse(result.body) as { head: unknown; results?: { bindings: unknown[] }; boolean?: boolean };
    let total = 0;
    let returned = 0;
    let results = result.body;
    if (doc.results) {
      const all = doc.results.bindings;
      total = all.length;
      const page = all.slice(offset, limit === null ? undefined : offset + limit);
      returned = page.length;
      if (returned !== total) results = JSON.stringify({ head: doc.head, results: { bindings: page } });
    }
    const hasMore = offset + returned < total;
    return c.json({
      results,
      row_page: {
        returned,
        total,
        offset,
        limit: limit ?? returned,
        has_more: hasMore,
        // A page that returned nothing (limit 0) offers no next offset: following it would not advance.
        next_offset: hasMore && returned > 0 ? offset + returned : null,
      },
      snapshot: {
        commit_seq: target.head, compacted_seq: target.head, served_at_seq: target.head,
        as_of_commit_seq: target.pin.pinned ? target.pin.seq : null,
      },
    });
  });
}
