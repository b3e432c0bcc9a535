import type { Hono, Context } from 'hono';
import type { AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { ApiError, badRequest } from '../errors.js';
import { mediaType, parseJsonObject, readBodyLimited } from '../body.js';
import { Params, parseRfc3339 } from '../params.js';
import { requireJson } from './query.js';
import { checkFields, parseCommitFile, parseEntity } from '../../model/triplets.js';
import type { RetractIn } from '../../store/triplet-writes.js';
import { headSeqOf } from '../../store/db.js';

const JSON_LIMIT = 16 * 1024 * 1024;

export function idempotencyKey(c: Context<Env>): string | null {
  const key = c.req.header('idempotency-key') ?? null;
  if (key !== null && (key.length === 0 || key.length > 255)) {
    throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 characters', 'Idempotency-Key');
  }
  return key;
}

const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/json-seq', 'application/json', 'text/plain', 'application/octet-stream']);

function requireNdjson(header: string | undefined) {
  const { type } = mediaType(header);
  if (type !== null && !NDJSON_TYPES.has(type)) {
    throw new ApiError(415, 'invalid_request_error', 'unsupported_media_type', `this route takes NDJSON (application/x-ndjson), not ${type}`, { param: 'Content-Type' });
  }
}

function requireConfirm(p: Params, graph: string) {
  const confirm = p.string('confirm');
  if (confirm !== graph) {
    throw badRequest('confirmation_required', `this operation is destructive: pass confirm=${graph} (the graph name) to proceed`, 'confirm');
  }
}

/** POST /v1/graph/commit, /retract, /import, /reload, /create, /delete; GET /v1/graphs. */
export function writeRoutes(app: Hono<Env>, ctx: AppContext) {
  const { writer, config } = ctx;

  app.post('/v1/graph/commit', async (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['dry_run']);
    const dryRun = p.bool('dry_run', false);
    const key = idempotencyKey(c);
    requireJson(c.req.header('content-type'));
    const file = parseCommitFile(parseJsonObject(await readBodyLimited(c, JSON_LIMIT)));
    const out = await writer.write({ op: 'commit', file, key, dryRun });
    return c.json(out.body, out.status as 200);
  });

  app.post('/v1/graph/retract', async (c) => {
    new Params(new URL(c.req.url).searchParams, []);
    const key = idempotencyKey(c);
    requireJson(c.req.header('content-type'));
    const body = parseJsonObject(await readBodyLimited(c, JSON_LIMIT));
    checkFields(body, ['edges', 'entities', 'purge_entity_properties'], 'body');
    const edges = body.edges ?? [];
    const entities = body.entities ?? [];
    if (!Array.isArray(edges)) throw badRequest('invalid_field', '"edges" must be a list', 'edges');
    if (!Array.isArray(entities)) throw badRequest('invalid_field', '"entities" must be a list', 'entities');
    if (edges.length === 0 && entities.length === 0) throw badRequest('empty_retract', 'give at least one edge or entity to retract', 'edges');
    const purge = body.purge_entity_properties ?? false;
    if (typeof purge !== 'boolean') throw badRequest('invalid_field', '"purge_entity_properties" must be a boolean', 'purge_entity_properties');
    const req: RetractIn = {
      edges: edges.map((e, i) => {
        const w = `edges[${i}]`;
        if (typeof e !== 'object' || e === null || Array.isArray(e)) throw badRequest('invalid_field', `${w} must be {source, relation, target}`, w);
        const o = e as Record<string, unknown>;
        checkFields(o, ['source', 'relation', 'target'], w);
        if (typeof o.relation !== 'string' || o.relation.trim() === '') throw badRequest('invalid_field', `${w}.relation must be a non-empty string`, `${w}.relation`);
        return { source: parseEntity(o.source, `${w}.source`), relation: o.relation, target: parseEntity(o.target, `${w}.target`) };
      }),
      entities: entities.map((e, i) => parseEntity(e, `entities[${i}]`)),
      purge,
    };
    const out = await writer.write({ op: 'retract', req, key });
    return c.json(out.body, out.status as 200);
  });

  app.post('/v1/graph/import', async (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['batch', 'strict', 'observed_at']);
    const batch = Math.min(10_000, Math.max(1, p.int('batch', -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) ?? 1000));
    const strict = p.bool('strict', false);
    const observed = p.string('observed_at');
    const key = idempotencyKey(c);
    requireNdjson(c.req.header('content-type'));
    const body = await readBodyLimited(c, config.maxImportBytes);
    const opts = { batch, strict, observedAt: observed ? parseRfc3339(observed, 'observed_at') : null };
    const out = await writer.write({ op: 'importNdjson', opts, key }, body);
    return c.json(out.body, out.status as 200);
  });

  app.post('/v1/graph/reload', async (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['confirm', 'dry_run', 'strict', 'observed_at']);
    requireConfirm(p, config.graph);
    const dryRun = p.bool('dry_run', false);
    const strict = p.bool('strict', false);
    const observed = p.string('observed_at');
    const key = idempotencyKey(c);
    requireNdjson(c.req.header('content-type'));
    const body = await readBodyLimited(c, config.maxImportBytes);
    const opts = { strict, dryRun, observedAt: observed ? parseRfc3339(observed, 'observed_at') : null };
    const out = await writer.write({ op: 'reload', opts, key }, body);
    return c.json(out.body, out.status as 200);
  });

  app.post('/v1/graph/create', (c) => {
    new Params(new URL(c.req.url).searchParams, []);
    const head = headSeqOf(ctx.readDb);
    // The fixed graph always exists; creating it again is a no-op.
    return c.json({ graph: { tenant_id: 'local', graph_id: config.graph, branch_id: config.branch }, commit_seq: head, ontology_version: 0 });
  });

  app.post('/v1/graph/delete', async (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['confirm']);
    requireConfirm(p, config.graph);
    const out = await writer.write({ op: 'deleteGraph', key: idempotencyKey(c), graph: config.graph });
    return c.json(out.body, out.status as 200);
  });

  app.get('/v1/graphs', (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['limit', 'cursor']);
    p.int('limit', 1, 1000);
    return c.json({ object: 'list', data: [{ graph_id: config.graph, branches: [config.branch] }], has_more: false, next_cursor: null });
  });

  const hostedOnly = (what: string) => () => {
    throw badRequest('requires_hosted_plane',
      `${what} needs the hosted plane: this server serves one fixed graph "${config.graph}" and branch "${config.branch}"`);
  };
  app.post('/v1/graph/fork', hostedOnly('forking a graph'));
  app.post('/v1/graph/branch', hostedOnly('creating a branch'));
  app.delete('/v1/graph/branch', hostedOnly('deleting a branch'));
  app.post('/v1/graph/branch/merge', hostedOnly('merging branches'));
}
