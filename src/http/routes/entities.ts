import type { Hono } from 'hono';
import { statSync } from 'node:fs';
import type { AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { ApiError, badRequest } from '../errors.js';
import { Params } from '../params.js';
import { TemporalReader } from '../../query/temporal.js';
import { resolvePin } from '../../query/pin.js';
import { headSeqOf } from '../../store/db.js';
import { checkConsistency } from './temporal.js';
import { localName } from '../../model/triplets.js';
import { relationName } from '../../store/graph-tx.js';
import { dbPath } from '../../store/db.js';

const ENTITY_PARAMS = ['id', 'type', 'name', 'as_of', 'as_of_commit_seq', 'as_of_valid_time', 'consistency', 'min_indexed_seq'];

/** GET /v1/graph/entity, /entity/metadata, /entity/neighborhood, /entities/sample, /changes, /read-snapshot, /metadata. */
export function entityRoutes(app: Hono<Env>, ctx: AppContext) {
  const reader = new TemporalReader(ctx.readDb);
  const graphKey = () => ({ tenant_id: 'local', graph_id: ctx.config.graph, branch_id: ctx.config.branch });

  const lookup = (p: Params) => {
    checkConsistency(ctx, p);
    const { pin, head } = resolvePin(ctx.readDb, {
      as_of: p.string('as_of'),
      as_of_commit_seq: p.string('as_of_commit_seq'),
      as_of_valid_time: p.string('as_of_valid_time'),
    });
    const id = p.string('id');
    const entity = reader.resolve(id ? { entity_id: id } : { entity_type: p.string('type'), name: p.string('name') }, id ? 'id' : 'name');
    return { pin, head, entity };
  };

  app.get('/v1/graph/entity', (c) => {
    const { pin, head, entity } = lookup(new Params(new URL(c.req.url).searchParams, ENTITY_PARAMS));
    return c.json(reader.detail(entity, pin, head));
  });

  app.get('/v1/graph/entity/metadata', (c) => {
    const { pin, head, entity } = lookup(new Params(new URL(c.req.url).searchParams, ENTITY_PARAMS));
    return c.json(reader.metadata(entity, pin, head));
  });

  app.get('/v1/graph/entity/neighborhood', (c) => {
    const p = new Params(new URL(c.req.url).searchParams, [...ENTITY_PARAMS, 'relations', 'edges']);
    const { pin, head, entity } = lookup(p);
    const max = p.int('edges', 1, 10_000) ?? 1000;
    const filter = p.string('relations');
    const wanted = filter ? new Set(filter.split(',').map((r) => relationName(r)).filter(Boolean)) : null;
    const side = (direction: 'out' | 'in') => {
      const rows = reader.currentEdges(entity.id, direction, pin).filter((e) => !wanted || wanted.has(e.relation));
      const edges = rows.slice(0, max).map((e) => {
        const s = reader.stateEntry(e, direction);
        return { relation: s.relation, peer: s.target, confidence: s.confidence, valid_time: s.valid_time, derived_from: s.derived_from };
      });
      return { edges, truncated: rows.length > max ? { returned: max, total_observed: rows.length } : null };
    };
    const out = side('out');
    const inc = side('in');
    return c.json({
      entity: reader.entityView(entity),
      outgoing: out.edges,
      incoming: inc.edges,
      snapshot: reader.snapshot(head, pin),
      served_from_ranged: false,
      truncation: out.truncated || inc.truncated ? { outgoing: out.truncated, incoming: inc.truncated } : null,
    });
  });

  app.get('/v1/graph/entities/sample', (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['type', 'limit', 'consistency', 'min_indexed_seq']);
    checkConsistency(ctx, p);
    const type = p.string('type');
    if (!type) throw badRequest('missing_parameter', 'parameter "type" is required', 'type');
    const limit = p.int('limit', 1, 128) ?? 20;
    const rows = (ctx.readDb.prepare('SELECT id, type, name FROM entities ORDER BY id').all() as { id: string; type: string; name: string }[])
      .filter((r) => localName(r.type) === localName(type));
    // Only entities with a current presence (type statement live) count.
    const live = ctx.readDb.prepare("SELECT 1 FROM quads WHERE s = ? AND p = '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>' AND g = '' AND removed_seq IS NULL LIMIT 1");
    const present = rows.filter((r) => live.get(`<${ctx.config.iriBase}e/${r.id}>`) !== undefined);
    const head = headSeqOf(ctx.readDb);
    const pin = { seq: head, validTime: null, pinned: false };
    return c.json({
      entity_type: type,
      total_count: present.length,
      // EntityTypeSampleRow: identity plus current degree.
      entities: present.slice(0, limit).map((r) => ({
        entity: { id: r.id, type: r.type, name: r.name },
        out_degree: reader.currentEdges(r.id, 'out', pin).length,
        in_degree: reader.currentEdges(r.id, 'in', pin).length,
      })),
      snapshot: { commit_seq: head, compacted_seq: head, served_at_seq: head },
      indexed_commit_seq: head,
    });
  });

  app.get('/v1/graph/changes', (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['since', 'limit']);
    const since = p.int('since', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const limit = p.int('limit', 1, 5000) ?? 500;
    const head = headSeqOf(ctx.readDb);
    if (since > head) {
      throw new ApiError(409, 'invalid_request_error', 'delta_unavailable',
        `since=${since} is past the head (commit_seq ${head}): this history cannot answer it; read the graph in full and continue from the head`, { param: 'since' });
    }
    const db = ctx.readDb;
    const commits = db.prepare('SELECT seq, kind, added, removed, committed_at FROM commits WHERE seq > ? ORDER BY seq').iterate(since) as IterableIterator<{ seq: number; kind: string; added: number; removed: number; committed_at: string }>;
    const entities: unknown[] = [];
    const observations: unknown[] = [];
    const edgeEvents: unknown[] = [];
    const commitRows: unknown[] = [];
    let to = since;
    let truncated = false;
    const entStmt = db.prepare('SELECT id, type, name, created_seq AS commit_seq FROM entities WHERE created_seq = @seq OR updated_seq = @seq');
    const obsStmt = db.prepare('SELECT id, seq, text FROM observations WHERE seq = ?');
    const evStmt = db.prepare('SELECT id, seq, op, source_id, relation, target_id FROM edge_events WHERE seq = ? ORDER BY id');
    const names = db.prepare('SELECT name FROM entities WHERE id = ?');
    const nameOf = (id: string) => (names.get(id) as { name: string } | undefined)?.name ?? id;
    const list = [...commits];
    for (const cm of list) {
      const ents = entStmt.all({ seq: cm.seq }) as { id: string; type: string; name: string }[];
      const obs = obsStmt.all(cm.seq) as { id: number; seq: number; text: string | null }[];
      const evs = evStmt.all(cm.seq) as { id: number; seq: number; op: string; source_id: string; relation: string; target_id: string }[];
      const size = ents.length + obs.length + evs.length;
      if (to > since && entities.length + observations.length + edgeEvents.length + size > limit) {
        truncated = true;
        break;
      }
      for (const e of ents) entities.push({ id: e.id, type: e.type, name: e.name, commit_seq: cm.seq });
      for (const o of obs) observations.push({ id: String(o.id), commit_seq: o.seq, text: o.text });
      for (const e of evs) {
        edgeEvents.push({
          edge_event_id: String(e.id), source: nameOf(e.source_id), source_id: e.source_id, relation: e.relation,
          target: nameOf(e.target_id), target_id: e.target_id, op: e.op, commit_seq: e.seq,
        });
      }
      commitRows.push({ commit_seq: cm.seq, kind: cm.kind, statements_added: cm.added, statements_removed: cm.removed, committed_at: cm.committed_at });
      to = cm.seq;
    }
    if (!truncated) to = Math.max(to, head);
    return c.json({
      from_commit_seq: since,
      to_commit_seq: to,
      entities,
      observations,
      edge_events: edgeEvents,
      commits: commitRows,
      next_since: to,
      snapshot_token: `st_${to}`,
      truncated,
      reset: false,
    });
  });

  const publication = () => {
    const head = headSeqOf(ctx.readDb);
    const served = Math.min(ctx.servedAtSeq(), head);
    return { head, served };
  };

  app.get('/v1/graph/read-snapshot', (c) => {
    new Params(new URL(c.req.url).searchParams, []);
    const { head, served } = publication();
    return c.json({
      head_seq: head,
      head_generation: head,
      snapshot: {
        graph: graphKey(),
        epoch: 1,
        generation: served,
        predecessor_generation: null,
        source_head_generation: served,
        format_version: 1,
        projection_version: null,
        served_at_seq: served,
        min_family_served_at_seq: served,
        families: [
          { family: 'base', root_format_version: 1, served_at_seq: served, model_hash: null, target_hash: null },
          { family: 'rdf', root_format_version: 1, served_at_seq: served, model_hash: null, target_hash: null },
        ],
        summary_available: true,
        conformance: null,
      },
      query_lag_commits: head - served,
      generation_lag: head - served,
      conformance_lag_commits: null,
    });
  });

  app.get('/v1/graph/metadata', (c) => {
    new Params(new URL(c.req.url).searchParams, []);
    const { head, served } = publication();
    const size = (f: string) => {
      try {
        return statSync(f).size;
      } catch {
        return 0;
      }
    };
    const file = dbPath(ctx.config.dataDir);
    const counts = ctx.readDb.prepare('SELECT (SELECT COUNT(*) FROM entities) AS entities, (SELECT COUNT(*) FROM edge_events) AS edge_events, (SELECT COUNT(*) FROM commits) AS commits').get() as Record<string, number>;
    return c.json({
      graph: graphKey(),
      snapshot: { commit_seq: head, compacted_seq: served, served_at_seq: served },
      ontology_version: 0,
      head_generation: head,
      wal_tail_commits: head - served,
      wal_tail_bytes: size(file + '-wal'),
      published_lag_commits: head - served,
      bm25_indexed_commit_seq: null,
      ann_indexed_commit_seq: null,
      database_bytes: size(file),
      ...counts,
    });
  });
}
