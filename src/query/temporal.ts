import { createHash } from 'node:crypto';
import type { DB } from '../store/db.js';
import { ApiError, badRequest, notFound } from '../http/errors.js';
import { entityId, localName } from '../model/triplets.js';
import { relationName, type EntityRow } from '../store/graph-tx.js';

/** Reads of history and provenance, straight from SQLite's append-only edge events. */

export interface EntitySelector {
  entity_id?: string | null;
  entity_type?: string | null;
  name?: string | null;
}

export interface Pin {
  /** Knowledge as of this commit (the head when not pinned). */
  seq: number;
  /** Instant the edges must be valid at, or null. */
  validTime: string | null;
  pinned: boolean;
}


interface EventRow {
  id: number;
  seq: number;
  op: 'assert' | 'retract';
  source_id: string;
  relation: string;
  target_id: string;
  confidence: number;
  observation_id: number | null;
  valid_from: string | null;
  valid_to: string | null;
  granularity: string | null;
  source_text: string | null;
  at: string;
  supersedes: string | null;
}

const MAX_ROWS = 1000;

const micros = (iso: string | null) => (iso === null ? null : Date.parse(iso) * 1000);

export function validTimeView(e: Pick<EventRow, 'valid_from' | 'valid_to' | 'granularity' | 'source_text'>) {
  return {
    start_micros: micros(e.valid_from),
    end_micros: micros(e.valid_to),
    granularity: e.granularity ?? 'unknown',
    source_text: e.source_text,
  };
}

/**
 * A RelationView: the relation's canonical name and its RelationTypeId, which the contract
 * types as a non-negative int32. There is no relation registry, so the id is a stable hash
 * of the name: the same relation has the same id in every read and after every restart.
 */
export function relationView(name: string) {
  return { id: createHash('sha256').update(name).digest().readUInt32BE(0) & 0x7fffffff, name };
}

function parseIds(json: string | null): string[] {
  return json ? (JSON.parse(json) as string[]) : [];
}

export class TemporalReader {
  constructor(private readonly db: DB) {}

  entityView(row: EntityRow) {
    return { id: row.id, type: row.type, name: row.name };
  }

  private entityRow(id: string): EntityRow | undefined {
    return this.db.prepare('SELECT * FROM entities WHERE id = ?').get(id) as EntityRow | undefined;
  }

  /** Finds an entity by id, or by type + name (a keyed entity is found by its display name too). */
  resolve(sel: EntitySelector | undefined, param: string): EntityRow {
    if (!sel || typeof sel !== 'object') throw badRequest('invalid_field', `${param} must be {entity_id} or {entity_type, name}`, param);
    if (sel.entity_id) {
      const row = this.entityRow(sel.entity_id);
      if (!row) throw notFound('entity_not_found', `no entity with id ${sel.entity_id}`, param);
      return row;
    }
    if (!sel.entity_type || !sel.name) throw badRequest('invalid_field', `${param} needs entity_id, or entity_type and name`, param);
    const byId = this.entityRow(entityId({ type: sel.entity_type, name: sel.name, key: null }));
    if (byId) return byId;
    const rows = (this.db.prepare('SELECT * FROM entities WHERE name = ?').all(sel.name) as EntityRow[]).filter(
      (r) => localName(r.type) === localName(sel.entity_type!),
    );
    if (rows.length === 0) throw notFound('entity_not_found', `no ${sel.entity_type} named "${sel.name}"`, param);
    if (rows.length > 1) {
      throw new ApiError(409, 'invalid_request_error', 'entity_ambiguous',
        `${rows.length} ${sel.entity_type} entities are named "${sel.name}" (distinct keys); select one by entity_id`, { param });
    }
    return rows[0]!;
  }

  /** The latest event per (source, relation, target) known by the pin, for edges from or to an entity. */
  private latestEvents(id: string, direction: 'out' | 'in', pin: Pin, relation?: string): EventRow[] {
    const col = direction === 'out' ? 'source_id' : 'target_id';
    const rel = relation !== undefined ? 'AND relation = @relation' : '';
    return this.db
      .prepare(
        `SELECT e.* FROM edge_events e JOIN (
           SELECT MAX(id) AS id FROM edge_events WHERE ${col} = @id AND seq <= @seq ${rel} GROUP BY source_id, relation, target_id
         ) last ON last.id = e.id ORDER BY e.id`,
      )
      .all({ id, seq: pin.seq, ...(relation !== undefined ? { relation } : {}) }) as EventRow[];
  }

  /** Current edges (as of the pin): the latest event of each edge is an assert, valid at the pin's instant. */
  currentEdges(id: string, direction: 'out' | 'in', pin: Pin, relation?: string): EventRow[] {
    if (pin.validTime === null) return this.latestEvents(id, direction, pin, relation).filter((e) => e.op === 'assert');
    // Valid-time reads look at every assertion known by the pin. Each one claims validity from
    // valid_time.start (else its transaction time) until valid_time.end (else the edge's next
    // event: a retraction, or a re-assertion that restates the interval) — the same intervals
    // the statements' lifetime rows give as-of-valid-time SPARQL.
    const col = direction === 'out' ? 'source_id' : 'target_id';
    const rows = this.db
      .prepare(`SELECT * FROM edge_events WHERE ${col} = @id AND seq <= @seq ${relation !== undefined ? 'AND relation = @relation' : ''} ORDER BY id`)
      .all({ id, seq: pin.seq, ...(relation !== undefined ? { relation } : {}) }) as EventRow[];
    const byEdge = new Map<string, EventRow[]>();
    for (const e of rows) {
      const k = `${e.source_id}|${e.relation}|${e.target_id}`;
      const list = byEdge.get(k);
      if (list) list.push(e);
      else byEdge.set(k, [e]);
    }
    const t = pin.validTime;
    const out: EventRow[] = [];
    for (const events of byEdge.values()) {
      let hit: EventRow | null = null;
      events.forEach((e, i) => {
        if (e.op !== 'assert') return;
        const start = e.valid_from ?? e.at;
        const end = e.valid_to ?? events[i + 1]?.at ?? null;
        if (start <= t && (end === null || end > t)) hit = e;
      });
      if (hit) out.push(hit);
    }
    return out;
  }

  private entityOrUnknown(id: string) {
    const row = this.entityRow(id);
    return row ? this.entityView(row) : { id, type: 'unknown', name: id };
  }

  stateEntry(e: EventRow, direction: 'out' | 'in' = 'out') {
    return {
      relation: relationView(e.relation),
      target: this.entityOrUnknown(direction === 'out' ? e.target_id : e.source_id),
      confidence: e.confidence,
      valid_time: validTimeView(e),
      derived_from: [String(e.id)],
      previous: parseIds(e.supersedes),
    };
  }

  snapshot(head: number, pin: Pin) {
    return { commit_seq: head, compacted_seq: head, served_at_seq: head, as_of_commit_seq: pin.pinned ? pin.seq : null };
  }

  state(entity: EntityRow, pin: Pin, relations: string[] | null) {
    let rows = this.currentEdges(entity.id, 'out', pin);
    if (relations) {
      const wanted = new Set(relations.map(relationName));
      rows = rows.filter((r) => wanted.has(r.relation));
    }
    return rows.map((e) => this.stateEntry(e));
  }

  history(source: EntityRow, relation: string | null, pin: Pin) {
    const rows = this.db
      .prepare(
        `SELECT * FROM edge_events WHERE source_id = @id AND seq <= @seq ${relation !== null ? 'AND relation = @relation' : ''} ORDER BY id LIMIT ${MAX_ROWS}`,
      )
      .all({ id: source.id, seq: pin.seq, ...(relation !== null ? { relation: relationName(relation) } : {}) }) as EventRow[];
    return rows.map((e) => ({
      target: this.entityOrUnknown(e.target_id),
      relation: relationView(e.relation),
      edge_event_id: String(e.id),
      op: e.op,
      commit_seq: e.seq,
      confidence: e.confidence,
      valid_time: validTimeView(e),
      evidence: e.observation_id !== null ? [String(e.observation_id)] : [],
      supersedes: parseIds(e.supersedes),
      object_kind: 'wal',
      object_key: null,
      object_hash: null,
    }));
  }

  why(source: EntityRow, relation: string, target: EntityRow, pin: Pin) {
    const rel = relationName(relation);
    const rows = this.db
      .prepare(
        `SELECT e.*, o.text AS evidence_text, o.source_id AS evidence_source, o.observed_at
           FROM edge_events e LEFT JOIN observations o ON o.id = e.observation_id
          WHERE e.source_id = ? AND e.relation = ? AND e.target_id = ? AND e.seq <= ? ORDER BY e.id`,
      )
      .all(source.id, rel, target.id, pin.seq) as (EventRow & { evidence_text: string | null; evidence_source: string | null; observed_at: string | null })[];
    const current = this.currentEdges(source.id, 'out', pin, rel).find((e) => e.target_id === target.id) ?? null;
    const asserts = rows.filter((r) => r.op === 'assert');
    return {
      current_edge: current ? String(current.id) : null,
      evidence: asserts.filter((r) => r.observation_id !== null).map((r) => String(r.observation_id)),
      previous_edges: rows.filter((r) => !current || r.id !== current.id).map((r) => String(r.id)),
      // Beyond the contract's ids: each supporting observation with what it said.
      observations: asserts.map((r) => ({
        id: String(r.observation_id),
        edge_event_id: String(r.id),
        commit_seq: r.seq,
        confidence: r.confidence,
        evidence: r.evidence_text,
        source_id: r.evidence_source,
        observed_at: r.observed_at,
        valid_time: validTimeView(r),
      })),
      retractions: rows.filter((r) => r.op === 'retract').map((r) => ({ edge_event_id: String(r.id), commit_seq: r.seq, at: r.at })),
    };
  }

  transitions(entity: EntityRow, relation: string, pin: Pin) {
    const rel = relationName(relation);
    const rows = (this.db
      .prepare("SELECT * FROM edge_events WHERE source_id = ? AND relation = ? AND seq <= ? AND op = 'assert' ORDER BY id")
      .all(entity.id, rel, pin.seq) as EventRow[]).filter((e) => pin.validTime === null || (e.valid_from ?? e.at) <= pin.validTime);
    const withAt = rows.map((e) => ({ e, at: e.valid_from ?? e.at, fromValid: e.valid_from !== null }));
    withAt.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.e.id - b.e.id));
    // A state relation never has two targets current at once for this source.
    const isState = this.isStateRelation(entity.id, rel, pin);
    const transitions = withAt.map((x, i) => {
      const next = withAt[i + 1];
      const atMicros = Date.parse(x.at) * 1000;
      let dwell: number | null = null;
      if (next) dwell = Date.parse(next.at) * 1000 - atMicros;
      else if (x.e.valid_to) dwell = Date.parse(x.e.valid_to) * 1000 - atMicros;
      return {
        target: this.entityOrUnknown(x.e.target_id),
        at_micros: atMicros,
        at_from_valid_time: x.fromValid,
        confidence: x.e.confidence,
        valid_time: validTimeView(x.e),
        commit_seq: x.e.seq,
        edge_event_id: String(x.e.id),
        dwell_micros: dwell,
      };
    });
    return { isState, transitions };
  }

  private isStateRelation(source: string, rel: string, pin: Pin): boolean {
    return this.currentEdges(source, 'out', { ...pin, validTime: null }, rel).length <= 1;
  }

  edgeRow(e: EventRow) {
    return {
      source: this.entityOrUnknown(e.source_id),
      relation: relationView(e.relation),
      target: this.entityOrUnknown(e.target_id),
      confidence: e.confidence,
      valid_time: validTimeView(e),
      evidence: e.observation_id !== null ? [String(e.observation_id)] : [],
      reducer: 'append_only',
      superseded: parseIds(e.supersedes),
      edge_event_id: String(e.id),
    };
  }

  /** Stored properties as native JSON (sets as arrays), as of the pin. */
  attributes(id: string, pin: Pin): Record<string, unknown> {
    const rows = this.db
      .prepare('SELECT field, value FROM entity_props WHERE entity_id = ? AND added_seq <= ? AND (removed_seq IS NULL OR removed_seq > ?) ORDER BY field')
      .all(id, pin.seq, pin.seq) as { field: string; value: string }[];
    const out: Record<string, unknown> = {};
    for (const r of rows) out[r.field] = (JSON.parse(r.value) as { v: unknown }).v;
    return out;
  }

  lastCommit(id: string, pin: Pin): number | null {
    const r = this.db
      .prepare(
        `SELECT MAX(seq) AS seq FROM (
           SELECT MAX(seq) AS seq FROM edge_events WHERE (source_id = @id OR target_id = @id) AND seq <= @pin
           UNION ALL SELECT MAX(added_seq) FROM entity_props WHERE entity_id = @id AND added_seq <= @pin
           UNION ALL SELECT created_seq FROM entities WHERE id = @id AND created_seq <= @pin)`,
      )
      .get({ id, pin: pin.seq }) as { seq: number | null };
    return r.seq;
  }

  detail(entity: EntityRow, pin: Pin, head: number) {
    const outgoing = this.currentEdges(entity.id, 'out', pin);
    const incoming = this.currentEdges(entity.id, 'in', pin);
    const history = this.db
      .prepare(`SELECT * FROM edge_events WHERE (source_id = @id OR target_id = @id) AND seq <= @seq ORDER BY id DESC LIMIT ${MAX_ROWS}`)
      .all({ id: entity.id, seq: pin.seq }) as EventRow[];
    const observations = this.db
      .prepare(
        `SELECT o.id, o.seq, o.text, o.source_id, COUNT(e.id) AS edges FROM observations o JOIN edge_events e ON e.observation_id = o.id
          WHERE (e.source_id = @id OR e.target_id = @id) AND o.seq <= @seq GROUP BY o.id ORDER BY o.id DESC LIMIT ${MAX_ROWS}`,
      )
      .all({ id: entity.id, seq: pin.seq }) as { id: number; seq: number; text: string | null; source_id: string | null; edges: number }[];
    const snapshot = this.snapshot(head, pin);
    return {
      snapshot,
      entity: this.entityView(entity),
      metadata: this.metadata(entity, pin, head),
      attributes: this.attributes(entity.id, pin),
      current_state: outgoing.map((e) => this.stateEntry(e)),
      outgoing: outgoing.map((e) => this.edgeRow(e)),
      incoming: incoming.map((e) => this.edgeRow(e)),
      history: history.map((e) => ({
        edge_event_id: String(e.id),
        source: this.entityOrUnknown(e.source_id),
        relation: relationView(e.relation),
        target: this.entityOrUnknown(e.target_id),
        op: e.op,
        polarity: e.op === 'assert' ? 'positive' : 'negative',
        commit_seq: e.seq,
        confidence: e.confidence,
        valid_time: validTimeView(e),
        evidence: e.observation_id !== null ? [String(e.observation_id)] : [],
        supersedes: parseIds(e.supersedes),
      })),
      observations: observations.map((o) => ({
        id: String(o.id),
        observation_type: 'evidence',
        source_id: o.source_id ?? '',
        created_at_commit: o.seq,
        extracted_entity_count: 0,
        extracted_edge_event_count: o.edges,
        text: o.text,
        text_preview: o.text === null ? null : o.text.slice(0, 200),
      })),
      truncation: history.length >= MAX_ROWS || observations.length >= MAX_ROWS
        ? { history: { returned: history.length, total_observed: history.length }, observations: { returned: observations.length, total_observed: observations.length }, truncated_by_read_budget: false }
        : null,
    };
  }

  metadata(entity: EntityRow, pin: Pin, head: number) {
    return {
      entity: this.entityView(entity),
      snapshot: this.snapshot(head, pin),
      last_commit: this.lastCommit(entity.id, pin),
      object_kind: 'wal',
      object_key: null,
      object_hash: null,
      key: entity.key,
      created_at_commit: entity.created_seq,
      bm25_indexed_commit_seq: null,
      ann_indexed_commit_seq: null,
      index_lineage: null,
    };
  }
}
