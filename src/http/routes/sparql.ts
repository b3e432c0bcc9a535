import type { Hono, Context } from 'hono';
import type { AppContext } from '../context.js';
import { checkScope, type Env } from '../middleware.js';
import { ApiError, badRequest } from '../errors.js';
import { decodeUtf8, mediaType, parseForm, readBodyLimited } from '../body.js';
import { runSparql } from '../../query/sparql.js';
import { checkReadParams, READ_PARAMS } from '../read-params.js';

const PROTOCOL_PARAMS = ['query', 'default-graph-uri', 'named-graph-uri'];

function unsupportedType(type: string | null): ApiError {
  return new ApiError(415, 'invalid_request_error', 'unsupported_media_type',
    `POST /sparql takes application/x-www-form-urlencoded or application/sparql-query, not ${type ?? 'a body without Content-Type'}`,
    { param: 'Content-Type' });
}

function checkCharset(charset: string | null) {
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError(415, 'invalid_request_error', 'unsupported_charset', `the query must be UTF-8 encoded, not ${charset}`, { param: 'Content-Type' });
  }
}

/** GET/POST /sparql — the SPARQL 1.1 Protocol query operation. */
export function sparqlRoutes(app: Hono<Env>, ctx: AppContext) {
  const handler = async (c: Context<Env>) => {
    const url = new URL(c.req.url);
    const inUrl = parseForm(url.search.slice(1), 'query string');
    let params = inUrl;
    let query: string[];
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      query = params.getAll('query');
    } else {
      const { type, charset } = mediaType(c.req.header('content-type'));
      if (type === 'application/x-www-form-urlencoded') {
        checkCharset(charset);
        const body = decodeUtf8(await readBodyLimited(c, ctx.config.maxQueryBytes));
        const form = parseForm(body, 'form body');
        checkScope(ctx, form);
        if (inUrl.has('query')) throw badRequest('multiple_queries', 'give the query once: in the form body, not also in the URL', 'query');
        // Protocol parameters travel in the body; graph/branch and read options may stay in the URL.
        const merged = new URLSearchParams(inUrl);
        for (const [k, v] of form) merged.append(k, v);
        params = merged;
        query = params.getAll('query');
      } else if (type === 'application/sparql-query') {
        checkCharset(charset);
        if (inUrl.has('query')) throw badRequest('multiple_queries', 'a direct POST carries the query in the body; do not also send "query" in the URL', 'query');
        query = [decodeUtf8(await readBodyLimited(c, ctx.config.maxQueryBytes), 'query')];
      } else if (type === 'application/sparql-update') {
        throw unsupportedType(type);
      } else {
        throw unsupportedType(type);
      }
    }
    for (const k of new Set(params.keys())) {
      if (!PROTOCOL_PARAMS.includes(k) && !READ_PARAMS.includes(k) && k !== 'graph' && k !== 'branch') {
        if (k === 'update' || k === 'using-graph-uri' || k === 'using-named-graph-uri') {
          throw badRequest('update_not_supported', 'SPARQL Update is not accepted: /sparql serves the query operation only', k);
        }
        throw badRequest('unknown_parameter', `unknown parameter "${k}" (accepted: ${[...PROTOCOL_PARAMS, ...READ_PARAMS, 'graph', 'branch'].join(', ')})`, k);
      }
    }
    if (query.length === 0 || (query.length === 1 && query[0]!.trim() === '')) {
      throw badRequest('missing_query', 'no query: send it as the "query" parameter or as an application/sparql-query body', 'query');
    }
    if (query.length > 1) throw badRequest('multiple_queries', `"query" was given ${query.length} times; send exactly one`, 'query');
    const target = await checkReadParams(ctx, params);
    const result = await runSparql(target, ctx.config.unionDefaultGraph, {
      query: query[0]!,
      accept: c.req.header('accept'),
      defaultGraphs: params.getAll('default-graph-uri'),
      namedGraphs: params.getAll('named-graph-uri'),
    });
    const textual = !result.mediaType.includes('json') ? '; charset=utf-8' : '';
    return new Response(result.body, {
      status: 200,
      headers: { 'content-type': result.mediaType + textual, vary: 'Accept', 'cache-control': 'no-store' },
    });
  };
  app.get('/sparql', handler);
  app.post('/sparql', handler);
  app.on(['PUT', 'DELETE', 'PATCH'], '/sparql', () => {
    throw new ApiError(405, 'invalid_request_error', 'method_not_allowed', 'the SPARQL query operation uses GET or POST', {
      headers: { allow: 'GET, POST' },
    });
  });
}
