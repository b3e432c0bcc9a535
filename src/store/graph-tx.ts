import { cachedStatement, type DB } from './db.js';
import type { WriteCoordinator } from './write-tx.js';
import { quadLine } from '../model/rdf-terms.js';
import {
  entityId, fieldName, Iris, literal, propertyLiterals, RDF_TYPE, RDFS_LABEL,
  type EntityRef, type PropIn, type TripletIn,
} from '../model/triplets.js';

export interface EntityRow {
  id: string;
  type: string;
  name: string;
  key: string | null;
  created_seq: number;
  updated_seq: number;
}

export interface EdgeKey {
  source_id: string;
  relation: string;
  target_id: string;
}

export interface AssertOutcome {
  eventId: number | null;
  observationId: number | null;
  skipped: boolean;
  newEdge: boolean;
}

const CHUNK = 2000;
/** valid_from of statements valid at every instant. */
const TIMELESS = '0001-01-01T00:00:00.000Z';

/** Canonical relation name: how edges are matched and shown. */
export function relationName(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * One write (one commit_seq) expressed as graph operations: entities, edges, properties.
 * Every operation updates SQLite inside the open transaction and queues the exact RDF
 * delta for the head replicas, preserving order (a statement removed and re-added in one
 * write must reach the head in that order).
 */
export class GraphTx {
  added = 0;
  removed = 0;
  readonly createdEntities = new Set<string>();
  readonly touchedEntities = new Set<string>();
  private pendingOp: 'load' | 'unload' = 'load';
  private plain: string[] = [];
  private blank: string[] = [];
  private readonly db: DB;
  private readonly st: Statements;

  constructor(
    private readonly w: WriteCoordinator,
    readonly iris: Iris,
    readonly seq: number,
    /** Transaction time of this write: the observed_at backfill or now. */
    readonly at: string,
  ) {
    this.db = w.db;
    this.st = statements(this.db);
  }

  // ------------------------------------------------------------ statements

  private queue(op: 'load' | 'unload', line: string) {
    if (op !== this.pendingOp) this.flush();
    this.pendingOp = op;
    this.plain.push(line);
    if (this.plain.length >= CHUNK) this.flush();
  }

  /** Sends queued statements to the replicas. */
  flush() {
    if (this.plain.length === 0 && this.blank.length === 0) return;
    const text = this.plain.join('\n');
    const bnText = this.blank.join('\n');
    this.plain = [];
    this.blank = [];
    if (this.pendingOp === 'load') this.w.load(text, bnText);
    else this.w.unload(text, bnText);
  }

  /** Adds a default-graph statement; false when it is already live. */
  addQuad(s: string, p: string, o: string, validFrom: string | null = null, validTo: string | null = null): boolean {
    if (this.st.insertQuad.run(s, p, o, '', this.seq, validFrom, validTo).changes !== 1) return false;
    this.added++;
    this.queue('load', quadLine({ s, p, o, g: '' }));
    return true;
  }

  /** Removes a live default-graph statement; false when it was not live. */
  removeQuad(s: string, p: string, o: string): boolean {
    if (this.st.removeQuad.run(this.seq, s, p, o, '').changes !== 1) return false;
    this.removed++;
    this.queue('unload', quadLine({ s, p, o, g: '' }));
    return true;
  }

  isLive(s: string, p: string, o: string): boolean {
    return this.st.isLive.get(s, p, o, '') !== undefined;
  }

  // ------------------------------------------------------------ entities

  getEntity(id: string): EntityRow | undefined {
    return this.st.getEntity.get(id) as EntityRow | undefined;
  }

  /** Finds or creates an entity; re-asserts its type and label (a purged entity comes back). */
  entity(ref: EntityRef): { id: string; iri: string; row: EntityRow } {
    const id = entityId(ref);
    const iri = this.iris.entity(id);
    let row = this.getEntity(id);
    if (!row) {
      this.st.insertEntity.run(id, ref.type, ref.name, ref.key, this.seq, this.seq);
      row = { id, type: ref.type, name: ref.name, key: ref.key, created_seq: this.seq, updated_seq: this.seq };
      this.createdEntities.add(id);
    } else if (row.name !== ref.name) {
      // A keyed entity renamed: same identity, new label.
      this.removeQuad(iri, RDFS_LABEL, literal(row.name));
      this.st.renameEntity.run(ref.name, this.seq, id);
      row = { ...row, name: ref.name, updated_seq: this.seq };
    }
    this.touchedEntities.add(id);
    // Identity (type, label) is timeless: valid-time reads see an edge's endpoints whatever the instant.
    this.addQuad(iri, RDF_TYPE, this.iris.cls(row.type), TIMELESS);
    this.addQuad(iri, RDFS_LABEL, literal(row.name), TIMELESS);
    return { id, iri, row };
  }

  /** Removes an entity's type and label statements (it leaves SPARQL entirely). */
  removePresence(row: EntityRow) {
    const iri = this.iris.entity(row.id);
    this.removeQuad(iri, RDF_TYPE, this.iris.cls(row.type));
    this.removeQuad(iri, RDFS_LABEL, literal(row.name));
  }

  // ------------------------------------------------------------ edges

  edgeIri(e: EdgeKey): [string, string, string] {
    return [this.iris.entity(e.source_id), this.iris.relation(e.relation), this.iris.entity(e.target_id)];
  }

  isCurrent(e: EdgeKey): boolean {
    const [s, p, o] = this.edgeIri(e);
    return this.isLive(s, p, o);
  }

  lastAssertId(e: EdgeKey): number | null {
    const r = this.st.lastAssert.get(e.source_id, e.relation, e.target_id) as { id: number } | undefined;
    return r?.id ?? null;
  }

  assertEdge(t: TripletIn, mode: 'append' | 'skip_unchanged'): AssertOutcome {
    const src = this.entity(t.source);
    const tgt = this.entity(t.target);
    const relation = relationName(t.relation);
    const key: EdgeKey = { source_id: src.id, relation, target_id: tgt.id };
    const wasCurrent = this.isCurrent(key);
    const props = t.properties.length ? JSON.stringify(t.properties) : null;
    const last = this.st.lastAssert.get(src.id, relation, tgt.id) as
      | { id: number; confidence: number; valid_from: string | null; valid_to: string | null; granularity: string | null; source_text: string | null; properties: string | null; text: string | null; evidence_source: string | null }
      | undefined;
    if (
      wasCurrent && mode === 'skip_unchanged' && last &&
      last.confidence === t.confidence &&
      last.valid_from === (t.validTime?.start ?? null) && last.valid_to === (t.validTime?.end ?? null) &&
      (last.source_text ?? null) === (t.validTime?.sourceText ?? null) &&
      last.properties === props &&
      (last.text ?? null) === (t.evidence?.text ?? null) && (last.evidence_source ?? null) === (t.evidence?.sourceId ?? null)
    ) {
      return { eventId: null, observationId: null, skipped: true, newEdge: false };
    }
    const [s, p, o] = this.edgeIri(key);
    const validFrom = t.validTime?.start ?? null;
    const validTo = t.validTime?.end ?? null;
    if (wasCurrent) {
      // A re-assertion with another valid time: the statement's lifetime row carries the
      // interval as-of-valid-time reads select by, so end the old row and start a new one.
      const live = this.st.liveValid.get(s, p, o) as { valid_from: string | null; valid_to: string | null } | undefined;
      if (live && (live.valid_from !== validFrom || live.valid_to !== validTo)) this.removeQuad(s, p, o);
    }
    const newEdge = this.addQuad(s, p, o, validFrom, validTo) && !wasCurrent;
    const obs = Number(this.st.insertObservation.run(this.seq, t.evidence?.text ?? null, t.evidence?.sourceId ?? null, this.at).lastInsertRowid);
    const supersedes = wasCurrent && last ? JSON.stringify([String(last.id)]) : null;
    const ev = Number(
      this.st.insertEvent.run(
        this.seq, 'assert', src.id, relation, tgt.id, t.confidence, obs,
        t.validTime?.start ?? null, t.validTime?.end ?? null, t.validTime ? t.validTime.granularity : null, t.validTime?.sourceText ?? null,
        props, this.at, supersedes,
      ).lastInsertRowid,
    );
    return { eventId: ev, observationId: obs, skipped: false, newEdge };
  }

  /** Retracts a current edge; null when it was not current. */
  retractEdge(e: EdgeKey): number | null {
    const [s, p, o] = this.edgeIri(e);
    if (!this.removeQuad(s, p, o)) return null;
    const last = this.lastAssertId(e);
    return Number(
      this.st.insertEvent.run(
        this.seq, 'retract', e.source_id, e.relation, e.target_id, 0, null, null, null, null, null, null, this.at,
        last !== null ? JSON.stringify([String(last)]) : null,
      ).lastInsertRowid,
    );
  }

  /** Current edges with the entity as source or target. */
  currentEdgesTouching(id: string): EdgeKey[] {
    return (this.st.edgesTouching.all({ id }) as EdgeKey[]).filter((e) => this.isCurrent(e));
  }

  // ------------------------------------------------------------ properties

  liveProps(id: string): { id: number; field: string; value: string }[] {
    return this.st.liveProps.all(id) as { id: number; field: string; value: string }[];
  }

  private dropProp(entityIri: string, row: { id: number; field: string; value: string }) {
    this.st.removeProp.run(this.seq, row.id);
    for (const lit of propertyLiterals(JSON.parse(row.value))) this.removeQuad(entityIri, this.iris.property(row.field), lit);
  }

  /**
   * Writes properties (merge: set fields replace their old value; replace: the given fields
   * become the whole set) and drops `removeFields`. Returns the fields written and removed.
   */
  setProperties(id: string, props: PropIn[], removeFields: string[], mode: 'merge' | 'replace'): { fields: string[]; removed: string[] } {
    const iri = this.iris.entity(id);
    const live = this.liveProps(id);
    const byField = new Map(live.map((r) => [r.field, r]));
    const fields: string[] = [];
    const removed: string[] = [];
    // One value per canonical field; a later mention (e.g. a second NDJSON line) wins.
    const latest = new Map(props.map((p) => [fieldName(p.field), p.value]));
    const setFields = new Set(latest.keys());
    for (const [field, v] of latest) {
      const value = JSON.stringify(v);
      const old = byField.get(field);
      fields.push(field);
      if (old && old.value === value) continue; // unchanged
      if (old) this.dropProp(iri, old);
      this.st.insertProp.run(id, field, value, this.seq);
      for (const lit of propertyLiterals(v)) this.addQuad(iri, this.iris.property(field), lit);
    }
    const drop = new Set(removeFields.map(fieldName));
    if (mode === 'replace') for (const f of byField.keys()) if (!setFields.has(f)) drop.add(f);
    for (const f of drop) {
      const old = byField.get(f);
      if (!old) continue;
      this.dropProp(iri, old);
      removed.push(f);
    }
    if (fields.length || removed.length) this.st.touchEntity.run(this.seq, id);
    return { fields, removed };
  }

  /** Clears every stored property of an entity; the number of fields removed. */
  purgeProperties(id: string): number {
    const iri = this.iris.entity(id);
    const live = this.liveProps(id);
    for (const r of live) this.dropProp(iri, r);
    return live.length;
  }

  /** Writes the commit row (only when something changed) and flushes the head delta. */
  finish(kind: string, observedAt: string | null, meta: unknown = null): boolean {
    this.flush();
    if (this.added === 0 && this.removed === 0 && !this.hasEvents()) return false;
    cachedStatement(this.db, 'INSERT INTO commits (seq, committed_at, observed_at, kind, added, removed, meta) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(this.seq, new Date().toISOString(), observedAt, kind, this.added, this.removed, meta === null ? null : JSON.stringify(meta));
    return true;
  }

  private hasEvents(): boolean {
    return cachedStatement(this.db, 'SELECT 1 FROM edge_events WHERE seq = ? LIMIT 1').get(this.seq) !== undefined
      || cachedStatement(this.db, 'SELECT 1 FROM entity_props WHERE added_seq = ? OR removed_seq = ? LIMIT 1').get(this.seq, this.seq) !== undefined;
  }
}

function prepareAll(db: DB) {
  const st = {
    insertQuad: db.prepare('INSERT OR IGNORE INTO quads (s, p, o, g, bn, added_seq, valid_from, valid_to) VALUES (?, ?, ?, ?, 0, ?, ?, ?)'),
    removeQuad: db.prepare('UPDATE quads SET removed_seq = ? WHERE s = ? AND p = ? AND o = ? AND g = ? AND removed_seq IS NULL'),
    liveBySP: db.prepare('SELECT o FROM quads WHERE s = ? AND p = ? AND g = \'\' AND removed_seq IS NULL'),
    isLive: db.prepare('SELECT 1 FROM quads WHERE s = ? AND p = ? AND o = ? AND g = ? AND removed_seq IS NULL'),
    liveValid: db.prepare("SELECT valid_from, valid_to FROM quads WHERE s = ? AND p = ? AND o = ? AND g = '' AND removed_seq IS NULL"),
    getEntity: db.prepare('SELECT id, type, name, key, created_seq, updated_seq FROM entities WHERE id = ?'),
    insertEntity: db.prepare('INSERT INTO entities (id, type, name, key, created_seq, updated_seq) VALUES (?, ?, ?, ?, ?, ?)'),
    renameEntity: db.prepare('UPDATE entities SET name = ?, updated_seq = ? WHERE id = ?'),
    touchEntity: db.prepare('UPDATE entities SET updated_seq = ? WHERE id = ?'),
    insertObservation: db.prepare('INSERT INTO observations (seq, text, source_id, observed_at) VALUES (?, ?, ?, ?)'),
    insertEvent: db.prepare(
      `INSERT INTO edge_events (seq, op, source_id, relation, target_id, confidence, observation_id, valid_from, valid_to, granularity, source_text, properties, at, supersedes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    lastAssert: db.prepare(
      `SELECT e.id, e.confidence, e.valid_from, e.valid_to, e.granularity, e.source_text, e.properties, o.text, o.source_id AS evidence_source
         FROM edge_events e LEFT JOIN observations o ON o.id = e.observation_id
        WHERE e.source_id = ? AND e.relation = ? AND e.target_id = ? AND e.op = 'assert' ORDER BY e.id DESC LIMIT 1`,
    ),
    edgesTouching: db.prepare(
      `SELECT DISTINCT source_id, relation, target_id FROM edge_events WHERE source_id = @id
       UNION SELECT DISTINCT source_id, relation, target_id FROM edge_events WHERE target_id = @id`,
    ),
    liveProps: db.prepare('SELECT id, field, value FROM entity_props WHERE entity_id = ? AND removed_seq IS NULL'),
    insertProp: db.prepare('INSERT INTO entity_props (entity_id, field, value, added_seq) VALUES (?, ?, ?, ?)'),
    removeProp: db.prepare('UPDATE entity_props SET removed_seq = ? WHERE id = ?'),
  };
  return st;
}

type Statements = ReturnType<typeof prepareAll>;
const cache = new WeakMap<DB, Statements>();

/** Prepared once per connection: a commit should not pay for compiling SQL. */
function statements(db: DB): Statements {
  let st = cache.get(db);
  if (!st) cache.set(db, (st = prepareAll(db)));
  return st;
}
