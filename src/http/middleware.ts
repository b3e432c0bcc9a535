import type { Context, MiddlewareHandler } from 'hono';
import { randomUUID } from 'node:crypto';
import { ApiError, errorBody } from './errors.js';
import { API_VERSION, type AppContext } from './context.js';

export type Env = { Variables: { requestId: string } };

/** x-request-id (echoing a sane client id) and lbb-version on every response, errors included. */
export const requestMeta: MiddlewareHandler<Env> = async (c, next) => {
  const incoming = c.req.header('x-request-id');
  const id = incoming && /^[A-Za-z0-9._:-]{1,128}$/.test(incoming) ? incoming : 'req_' + randomUUID().replace(/-/g, '');
  c.set('requestId', id);
  await next();
  c.res.headers.set('x-request-id', id);
  c.res.headers.set('lbb-version', API_VERSION);
};

export function errorResponse(c: Context<Env>, err: ApiError): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...err.headers };
  if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
  return new Response(JSON.stringify(errorBody(err, c.get('requestId') ?? null)), { status: err.status, headers });
}

/** Bearer token check on every data-plane route. */
export function requireToken(ctx: AppContext): MiddlewareHandler<Env> {
  return async (c, next) => {
    const h = c.req.header('authorization');
    const m = h ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(h) : null;
    if (!m) {
      throw new ApiError(401, 'authentication_error', 'missing_token', 'send the API token as "Authorization: Bearer <token>"', {
        headers: { 'www-authenticate': 'Bearer realm="stackd"' },
      });
    }
    if (!ctx.tokens.verify(m[1]!)) {
      throw new ApiError(401, 'authentication_error', 'invalid_token', 'the API token is not valid for this server', {
        headers: { 'www-authenticate': 'Bearer realm="stackd", error="invalid_token"' },
      });
    }
    await next();
  };
}

/**
 * The fixed-scope rule: this server serves one graph and one branch. Parameters naming
 * another get 404 graph_not_found / branch_not_found.
 */
export function checkScope(ctx: AppContext, params: URLSearchParams): void {
  const { graph, branch } = ctx.config;
  for (const g of params.getAll('graph')) {
    if (g !== graph) {
      throw new ApiError(404, 'invalid_request_error', 'graph_not_found',
        `graph "${g}" not found: this server serves one fixed graph and branch (graph "${graph}", branch "${branch}")`, { param: 'graph' });
    }
  }
  for (const b of params.getAll('branch')) {
    if (b !== branch) {
      throw new ApiError(404, 'invalid_request_error', 'branch_not_found',
        `branch "${b}" not found: this server serves one fixed graph and branch (graph "${graph}", branch "${branch}")`, { param: 'branch' });
    }
  }
}

/** The fixed-scope rule on the query string of every data-plane request. */
export function fixedScope(ctx: AppContext): MiddlewareHandler<Env> {
  return async (c, next) => {
    checkScope(ctx, new URL(c.req.url).searchParams);
    await next();
  };
}
