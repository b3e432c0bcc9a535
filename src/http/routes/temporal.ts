import type { Context, Hono } from 'hono';
import type { AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { ApiError, badRequest } from '../errors.js';
import { parseJsonObject, readBodyLimited } from '../body.js';
import { Params } from '../params.js';
import { requireJson } from './query.js';
import { checkFields } from '../../model/triplets.js';
import { TemporalReader, relationView, type EntitySelector } from '../../query/temporal.js';
import { relationName } from '../../store/graph-tx.js';
import { resolvePin } from '../../query/pin.js';
import { headSeqOf } from '../../store/db.js';

const CONSISTENCY = ['consistency', 'min_indexed_seq'];

/** `consistency` and `min_indexed_seq`: the head is always current, so only a floor past it waits (429). */
export function checkConsistency(ctx: AppContext, p: Params) {
  p.oneOf('consistency', ['eventual', 'strong'] as const, 'eventual');
  const floor = p.int('min_indexed_seq', 0, Number.MAX_SAFE_INTEGER);
  if (floor !== null) {
    const head = headSeqOf(ctx.readDb);
    if (floor > head) {
      throw new ApiError(429, 'rate_limit_error', 'read_your_writes_pending',
        `min_indexed_seq ${floor} is past the head (commit_seq ${head}); retry once that commit exists`,
        { param: 'min_indexed_seq', retryable: true, retryAfterSeconds: 1 });
    }
  }
}

async function jsonBody(ctx: AppContext, c: Context<Env>) {
  requireJson(c.req.header('content-type'));
  return parseJsonObject(await readBodyLimited(c, ctx.config.maxQueryBytes));
}

function selector(v: unknown, param: string): EntitySelector {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest('invalid_field', `${param} must be {entity_id} or {entity_type, name}`, param);
  checkFields(v as Record<string, unknown>, ['entity_id', 'entity_type', 'name'], param);
  return v as EntitySelector;
}

function stringField(body: Record<string, unknown>, name: string, required: boolean): string | null {
  const v = body[name];
  if (v === undefined || v === null) {
    if (required) throw badRequest('missing_field', `"${name}" is required`, name);
    return null;
  }
  if (typeof v !== 'string' || v.trim() === '') throw badRequest('invalid_field', `"${name}" must be a non-empty string`, name);
  return v;
}

/** POST /v1/query/state, /history, /why, /transitions — provenance and history from the commit log. */
export function temporalRoutes(app: Hono<Env>, ctx: AppContext) {
  const reader = new TemporalReader(ctx.readDb);

  /** Consistency options from the URL, a JSON body with known fields, and its pin. */
  const pinnedRequest = async (c: Context<Env>, fields: string[]) => {
    checkConsistency(ctx, new Params(new URL(c.req.url).searchParams, CONSISTENCY));
    const body = await jsonBody(ctx, c);
    checkFields(body, fields, 'body');
    return { body, ...resolvePin(ctx.readDb, body) };
  };

  app.post('/v1/query/state', async (c) => {
    const { body, pin, head } = await pinnedRequest(c, ['entity', 'relations', 'as_of_commit_seq', 'as_of_valid_time']);
    const entity = reader.resolve(selector(body.entity, 'entity'), 'entity');
    let relations: string[] | null = null;
    if (body.relations !== undefined && body.relations !== null) {
      if (!Array.isArray(body.relations) || !body.relations.every((r) => typeof r === 'string')) {
        throw badRequest('invalid_field', '"relations" must be a list of relation names', 'relations');
      }
      relations = body.relations as string[];
    }
    return c.json({ entity: reader.entityView(entity), state: reader.state(entity, pin, relations), snapshot: reader.snapshot(head, pin) });
  });

  app.post('/v1/query/history', async (c) => {
    const { body, pin, head } = await pinnedRequest(c, ['source', 'relation', 'as_of_commit_seq', 'as_of_valid_time']);
    const source = reader.resolve(selector(body.source, 'source'), 'source');
    const relation = stringField(body, 'relation', false);
    return c.json({ source: reader.entityView(source), history: reader.history(source, relation, pin), snapshot: reader.snapshot(head, pin) });
  });

  app.post('/v1/query/why', async (c) => {
    const { body, pin, head } = await pinnedRequest(c, ['source', 'relation', 'target', 'as_of_commit_seq', 'as_of_valid_time']);
    const source = reader.resolve(selector(body.source, 'source'), 'source');
    const target = reader.resolve(selector(body.target, 'target'), 'target');
    const relation = stringField(body, 'relation', true)!;
    return c.json({ ...reader.why(source, relation, target, pin), snapshot: reader.snapshot(head, pin) });
  });

  app.post('/v1/query/transitions', async (c) => {
    const { body, pin, head } = await pinnedRequest(c, ['entity', 'relation', 'as_of_commit_seq', 'as_of_valid_time']);
    const entity = reader.resolve(selector(body.entity, 'entity'), 'entity');
    const relation = stringField(body, 'relation', true)!;
    const { isState, transitions } = reader.transitions(entity, relation, pin);
    return c.json({
      entity: reader.entityView(entity),
      relation: relationView(relationName(relation)),
      reducer: isState ? 'single_active_value' : 'append_only',
      is_state_relation: isState,
      transitions,
      snapshot: reader.snapshot(head, pin),
    });
  });
}
