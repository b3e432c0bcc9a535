import { Hono } from 'hono';
import type { AppContext } from './context.js';
import { errorResponse, fixedScope, requestMeta, requireToken, type Env } from './middleware.js';
import { ApiError } from './errors.js';
import { systemRoutes, statusRoutes } from './routes/system.js';
import { sparqlRoutes } from './routes/sparql.js';
import { rdfImportRoutes } from './routes/rdf-import.js';
import { queryRoutes } from './routes/query.js';
import { graphRoutes } from './routes/graph.js';
import { writeRoutes } from './routes/writes.js';
import { temporalRoutes } from './routes/temporal.js';
import { entityRoutes } from './routes/entities.js';
import { importJobRoutes } from './routes/import-jobs.js';

/** The HTTP surface: /version and /healthz open, everything else behind the bearer token. */
export function createApp(ctx: AppContext): Hono<Env> {
  const app = new Hono<Env>();
  app.use('*', requestMeta);
  systemRoutes(app, ctx);

  const auth = requireToken(ctx);
  const scope = fixedScope(ctx);
  app.use('/sparql', auth, scope);
  app.use('/v1/*', auth, scope);
  sparqlRoutes(app, ctx);
  statusRoutes(app, ctx);
  rdfImportRoutes(app, ctx);
  queryRoutes(app, ctx);
  graphRoutes(app, ctx);
  writeRoutes(app, ctx);
  temporalRoutes(app, ctx);
  entityRoutes(app, ctx);
  importJobRoutes(app, ctx);

  app.notFound((c) =>
    errorResponse(c, new ApiError(404, 'invalid_request_error', 'route_not_found', `no route ${c.req.method} ${new URL(c.req.url).pathname}`)),
  );
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    ctx.log.error({ err, request_id: c.get('requestId') }, 'unhandled error');
    return errorResponse(c, new ApiError(500, 'api_error', 'internal_error', 'internal error; see the server log for this request id'));
  });
  return app;
}
