import { randomUUID } from 'node:crypto';
import type { WriteCoordinator } from './write-tx.js';
import { WriteFailure } from './write-tx.js';
import { GraphTx, relationName, type EdgeKey, type EntityRow } from './graph-tx.js';
import { findIdempotency, requestHash, saveIdempotency } from './idempotency.js';
import { markGraphCreated } from './graph-meta.js';
import {
  entityId, Iris, parseEntityProps, parseTriplet, timestamp, RDF_TYPE,
  type CommitFileIn, type EntityPropsIn, type EntityRef, type TripletIn,
} from '../model/triplets.js';
import { ApiError } from '../http/errors.js';
import { cachedStatement } from './db.js';

export const visibilityToken = (seq: number) => `vt_${seq}`;
export const snapshotToken = (seq: number) => `st_${seq}`;

export interface WriteOutcome {
  status: number;
  body: Record<string, unknown>;
}

type Replay = (body: Record<string, unknown>) => Record<string, unknown>;

/**
 * Idempotency shared by every write route: same key + same content replays the stored
 * response (marked replayed) and writes nothing; same key + other content is 409.
 */
function priorOutcome(w: WriteCoordinator, key: string | null, route: string, hash: string, replay: Replay): WriteOutcome | null {
  if (!key) return null;
  const prior = findIdempotency(w.db, key);
  if (!prior) return null;
  if (prior.route !== route || prior.request_hash !== hash) {
    throw new WriteFailure(409, 'idempotency_key_reused',
      'this Idempotency-Key was already used with a different request; use a new key for new content', 'Idempotency-Key');
  }
  return { status: prior.status, body: replay(JSON.parse(prior.response)) };
}

function remember(w: WriteCoordinator, key: string | null, route: string, hash: string, body: Record<string, unknown>, seq: number | null) {
  if (!key) return;
  saveIdempotency(w.db, { key, route, request_hash: hash, status: 200, response: JSON.stringify(body), commit_seq: seq });
}

function mintKey(key: string | null): string {
  return key ?? `idem_${randomUUID().replace(/-/g, '')}`;
}

function graphIsNew(w: WriteCoordinator): boolean {
  return cachedStatement(w.db, "SELECT 1 FROM meta WHERE key = 'graph_created_at'").get() === undefined;
}

/** Ends a write: dry runs roll back; real ones commit (or roll back when nothing changed). */
async function finishWrite(w: WriteCoordinator, changed: boolean): Promise<number | null> {
  if (w.isDryRun) {
    await w.abort();
    return null;
  }
  if (!changed) {
    await w.commitWithoutDelta(); // keeps the idempotency record
    return null;
  }
  return w.commit();
}

// ---------------------------------------------------------------- commit

const COMMIT_ROUTE = 'POST /v1/graph/commit';
const commitReplay: Replay = (b) => ({ ...b, replayed: true, commit: { ...(b.commit as object), idempotent_replay: true } });

export async function commitTriplets(
  w: WriteCoordinator, iris: Iris, file: CommitFileIn, key: string | null, dryRun: boolean,
): Promise<WriteOutcome> {
  const hash = key ? requestHash(COMMIT_ROUTE, file) : ''; // only an Idempotency-Key needs it
  if (!dryRun) {
    const prior = priorOutcome(w, key, COMMIT_ROUTE, hash, commitReplay);
    if (prior) return prior;
  }
  const seq = w.begin({ dryRun });
  const out = applyCommit(w, iris, file, key, hash, seq, dryRun);
  await finishWrite(w, out.changed);
  return out.outcome;
}

/**
 * Group commit: several single commits in one SQLite transaction (one fsync), each with its
 * own commit_seq and its own savepoint, so a refused request leaves the others intact.
 * Every request is acknowledged only after the shared transaction is durable.
 */
export async function commitGroup(
  w: WriteCoordinator, iris: Iris, reqs: { file: CommitFileIn; key: string | null }[],
): Promise<(WriteOutcome | WriteFailure)[]> {
  const results: (WriteOutcome | WriteFailure)[] = [];
  let changedAny = false;
  w.begin();
  for (const r of reqs) {
    const hash = r.key ? requestHash(COMMIT_ROUTE, r.file) : '';
    const prior = priorOutcome(w, r.key, COMMIT_ROUTE, hash, commitReplay);
    if (prior) {
      results.push(prior);
      continue;
    }
    const seq = w.headSeq() + 1;
    cachedStatement(w.db, 'SAVEPOINT one_commit').run();
    try {
      const out = applyCommit(w, iris, r.file, r.key, hash, seq, false);
      cachedStatement(w.db, 'RELEASE one_commit').run();
      changedAny ||= out.changed;
      results.push(out.outcome);
    } catch (e) {
      if (!(e instanceof WriteFailure)) throw e; // anything else aborts the whole group
      w.undoSeq(seq);
      w.db.exec('ROLLBACK TO one_commit');
      w.db.exec('RELEASE one_commit');
      results.push(e);
    }
  }
  await finishWrite(w, changedAny);
  return results;
}

/** The commit's work inside the open transaction, at `seq`. */
function applyCommit(
  w: WriteCoordinator, iris: Iris, file: CommitFileIn, key: string | null, hash: string, seq: number, dryRun: boolean,
): { outcome: WriteOutcome; changed: boolean } {
  const head = seq - 1;
  if (file.expectedHeadCommitSeq !== null && file.expectedHeadCommitSeq !== head) {
    throw new WriteFailure(409, 'precondition_failed',
      `expected_head_commit_seq is ${file.expectedHeadCommitSeq} but the head is ${head}`, 'preconditions.expected_head_commit_seq');
  }
  const created = graphIsNew(w);
  const tx = new GraphTx(w, iris, seq, file.observedAt ?? new Date().toISOString());
  const observationIds: string[] = [];
  const edgeEventIds: string[] = [];
  const skipped: unknown[] = [];
  file.triplets.forEach((t, index) => {
    const out = tx.assertEdge(t, file.edgeIdempotency);
    if (out.skipped) {
      skipped.push({ index, source: entityJson(t.source), relation: t.relation, target: entityJson(t.target), reason: 'unchanged' });
    } else {
      edgeEventIds.push(String(out.eventId));
      observationIds.push(String(out.observationId));
    }
  });
  const written = applyEntityProperties(tx, file.entityProperties, file.propertyMerge);
  const changed = tx.finish('commit', file.observedAt);
  if (changed && !dryRun) markGraphCreated(w.db);
  const noOp = !changed;
  const commitSeq = noOp ? head : seq;
  const commit = {
    commit_seq: commitSeq,
    visibility_token: visibilityToken(commitSeq),
    observation_ids: observationIds,
    entity_ids: [...tx.touchedEntities],
    edge_event_ids: edgeEventIds,
    idempotent_replay: false,
    no_op: noOp,
    skipped_edges: skipped,
    written_properties: written,
  };
  const body: Record<string, unknown> = {
    graph_created: created && changed,
    idempotency_key: mintKey(key),
    replayed: false,
    commit_seq: commitSeq,
    visibility_token: visibilityToken(commitSeq),
    entities_written: tx.touchedEntities.size,
    edges_written: edgeEventIds.length,
    no_op: noOp,
    written_properties: written,
    commit,
  };
  if (dryRun) {
    body.dry_run = true;
    body.would_commit_seq = changed ? seq : null;
    body.statements_added = tx.added;
    body.statements_removed = tx.removed;
    body.entities_created = tx.createdEntities.size;
  } else {
    remember(w, key, COMMIT_ROUTE, hash, body, changed ? seq : null);
  }
  return { outcome: { status: 200, body }, changed };
}

function entityJson(e: EntityRef) {
  return e.key !== null ? { type: e.type, name: e.name, key: e.key } : { type: e.type, name: e.name };
}

function applyEntityProperties(tx: GraphTx, list: EntityPropsIn[], mode: 'merge' | 'replace') {
  const written: { type: string; name: string; fields: string[]; removed_fields: string[] }[] = [];
  for (const ep of list) {
    let id: string;
    let row: EntityRow;
    if (ep.entityId) {
      const existing = tx.getEntity(ep.entityId);
      if (!existing) throw new WriteFailure(404, 'entity_not_found', `no entity with id ${ep.entityId}`, 'entity_properties.entity_id');
      id = ep.entityId;
      row = tx.entity({ type: existing.type, name: existing.name, key: existing.key }).row;
    } else {
      ({ id, row } = tx.entity(ep.entity));
    }
    const r = tx.setProperties(id, ep.properties, ep.removeFields, mode);
    written.push({ type: row.type, name: row.name, fields: r.fields, removed_fields: r.removed });
  }
  return written;
}

// ---------------------------------------------------------------- retract

export interface RetractIn {
  edges: { source: EntityRef; relation: string; target: EntityRef }[];
  entities: EntityRef[];
  purge: boolean;
}

export async function retract(w: WriteCoordinator, iris: Iris, req: RetractIn, key: string | null): Promise<WriteOutcome> {
  const route = 'POST /v1/graph/retract';
  const hash = requestHash(route, req);
  const replay: Replay = (b) => ({ ...b, idempotent_replay: true, retracted_edges: 0, retracted_entities: 0, purged_entities: 0 });
  const prior = priorOutcome(w, key, route, hash, replay);
  if (prior) return prior;
  const head = w.headSeq();
  const seq = w.begin();
  const tx = new GraphTx(w, iris, seq, new Date().toISOString());
  const events: string[] = [];
  let retractedEntities = 0;
  let purged = 0;
  for (const e of req.edges) {
    const ev = tx.retractEdge({ source_id: entityId(e.source), relation: relationName(e.relation), target_id: entityId(e.target) });
    if (ev !== null) events.push(String(ev));
  }
  for (const ent of req.entities) {
    const id = entityId(ent);
    let any = false;
    for (const edge of tx.currentEdgesTouching(id)) {
      const ev = tx.retractEdge(edge);
      if (ev !== null) {
        events.push(String(ev));
        any = true;
      }
    }
    if (any) retractedEntities++;
    if (req.purge) {
      const row = tx.getEntity(id);
      if (row) {
        const had = tx.purgeProperties(id);
        tx.removePresence(row);
        if (had > 0 || any) purged++;
      }
    }
  }
  const changed = tx.finish('retract', null);
  const commitSeq = changed ? seq : head;
  const body = {
    commit_seq: commitSeq,
    visibility_token: visibilityToken(commitSeq),
    retracted_edges: events.length,
    retracted_entities: retractedEntities,
    edge_event_ids: events,
    idempotent_replay: false,
    no_op: !changed,
    purged_entities: purged,
  };
  remember(w, key, route, hash, body, changed ? seq : null);
  await finishWrite(w, changed);
  return { status: 200, body };
}

// ---------------------------------------------------------------- NDJSON

export interface NdjsonRecord {
  line: number;
  triplet?: TripletIn;
  entity?: EntityPropsIn;
}

export interface NdjsonParse {
  records: NdjsonRecord[];
  linesRead: number;
  errors: { line: number; message: string }[];
  errorCount: number;
}

const MAX_ERRORS = 100;

/** A \\uD800-\\uDFFF escape: the only way a lone surrogate gets into parsed JSON text. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when a string or key anywhere in the value is not well-formed UTF-16 (it cannot become an IRI or a literal). */
function hasLoneSurrogate(v: unknown): boolean {
  if (typeof v === 'string') return LONE_SURROGATE.test(v);
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  if (typeof v === 'object' && v !== null) {
    return Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(x));
  }
  return false;
}

/** One triplet or entity-properties object per line; bad lines are reported by number (or fail under strict). */
export function parseNdjson(text: string, strict: boolean): NdjsonParse {
  const records: NdjsonRecord[] = [];
  const errors: { line: number; message: string }[] = [];
  let errorCount = 0;
  let lineNo = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const raw = text.slice(pos, end).trim();
    pos = end + 1;
    lineNo++;
    if (raw === '') continue;
    try {
      let v: unknown;
      try {
        v = JSON.parse(raw);
      } catch (e) {
        throw new Error(`not valid JSON: ${(e as Error).message}`);
      }
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('each line must be a JSON object');
      if (SURROGATE_ESCAPE.test(raw) && hasLoneSurrogate(v)) {
        throw new Error('a string has an unpaired UTF-16 surrogate escape (\\uD800-\\uDFFF); text must be valid Unicode');
      }
      if ('relation' in v) records.push({ line: lineNo, triplet: parseTriplet(v, 'line') });
      else records.push({ line: lineNo, entity: parseEntityProps(v, 'line') });
    } catch (e) {
      const message = e instanceof ApiError || e instanceof Error ? e.message : String(e);
      if (strict) throw new WriteFailure(400, 'invalid_ndjson_line', `line ${lineNo}: ${message}; nothing was written`, 'body');
      errorCount++;
      if (errors.length < MAX_ERRORS) errors.push({ line: lineNo, message });
    }
  }
  return { records, linesRead: lineNo, errors, errorCount };
}

/** Applies NDJSON records (triplets assert, entity lines merge properties) within one write. */
export function applyRecords(tx: GraphTx, records: NdjsonRecord[]): { triplets: number; properties: number; observations: number } {
  let triplets = 0;
  let properties = 0;
  let observations = 0;
  for (const r of records) {
    if (r.triplet) {
      if (!tx.assertEdge(r.triplet, 'skip_unchanged').skipped) observations++;
      triplets++;
    } else if (r.entity) {
      const { id } = tx.entity(r.entity.entity);
      tx.setProperties(id, r.entity.properties, r.entity.removeFields, 'merge');
      properties++;
    }
  }
  return { triplets, properties, observations };
}

export interface ImportOptions {
  batch: number;
  strict: boolean;
  observedAt: string | null;
}

/** POST /v1/graph/import: NDJSON in commits of `batch` records. */
export async function importNdjson(
  w: WriteCoordinator, iris: Iris, body: Uint8Array, opts: ImportOptions, key: string | null,
): Promise<WriteOutcome> {
  const route = 'POST /v1/graph/import';
  const hash = requestHash(route, opts, body);
  const replay: Replay = (b) => ({ ...b, idempotent_replay: true });
  const prior = priorOutcome(w, key, route, hash, replay);
  if (prior) return prior;
  const text = decode(body);
  const parsed = parseNdjson(text, opts.strict);
  const created = graphIsNew(w);
  const idem = mintKey(key);
  let batches = 0;
  let triplets = 0;
  let properties = 0;
  let last: number | null = null;
  for (let i = 0; i < parsed.records.length; i += opts.batch) {
    const group = parsed.records.slice(i, i + opts.batch);
    const seq = w.begin();
    const tx = new GraphTx(w, iris, seq, opts.observedAt ?? new Date().toISOString());
    const applied = applyRecords(tx, group);
    triplets += applied.triplets;
    properties += applied.properties;
    const changed = tx.finish('import', opts.observedAt, { idempotency_key: idem, batch: batches });
    const done = await finishWrite(w, changed);
    if (done !== null) {
      last = done;
      batches++;
      markGraphCreatedAfter(w);
    }
  }
  const out = {
    graph_created: created && last !== null,
    idempotent_replay: false,
    idempotency_key: idem,
    mutation_receipt_id: `mr_${hash.slice(0, 32)}`,
    lines_read: parsed.linesRead,
    triplets,
    properties,
    batches,
    error_count: parsed.errorCount,
    errors: parsed.errors,
    committed_commit_seq: last,
    published_generation: null,
  };
  if (key) {
    w.db.exec('BEGIN IMMEDIATE');
    try {
      remember(w, key, route, hash, out, last);
      w.db.exec('COMMIT');
    } catch (e) {
      w.db.exec('ROLLBACK');
      throw e;
    }
  }
  return { status: 200, body: out };
}

function markGraphCreatedAfter(w: WriteCoordinator) {
  w.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('graph_created_at', ?)").run(new Date().toISOString());
}

function decode(body: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new WriteFailure(400, 'invalid_encoding', 'the request body is not valid UTF-8', 'body');
  }
}

// ---------------------------------------------------------------- reload

export interface ReloadOptions {
  strict: boolean;
  observedAt: string | null;
  dryRun: boolean;
}

/**
 * POST /v1/graph/reload: the NDJSON is the complete desired state. One commit: payload
 * entities and edges are upserted; entities and edges absent from it leave current state;
 * properties of payload entities become exactly the payload's. A dry run performs the same
 * work in a transaction that is rolled back, so it reports exactly what the reload does.
 */
export async function reload(w: WriteCoordinator, iris: Iris, body: Uint8Array, opts: ReloadOptions, key: string | null): Promise<WriteOutcome> {
  const route = 'POST /v1/graph/reload';
  const hash = requestHash(route, { strict: opts.strict, observedAt: opts.observedAt }, body);
  const replay: Replay = (b) => ({
    ...b, idempotent_replay: true, entities_added: 0, entities_removed: 0, entities_changed: 0, edges_added: 0, edges_removed: 0, edges_changed: 0,
  });
  if (!opts.dryRun) {
    const prior = priorOutcome(w, key, route, hash, replay);
    if (prior) return prior;
  }
  const parsed = parseNdjson(decode(body), opts.strict);
  const prior = w.headSeq();
  const created = graphIsNew(w);
  const seq = w.begin({ dryRun: opts.dryRun });
  const tx = new GraphTx(w, iris, seq, opts.observedAt ?? new Date().toISOString());

  // Entities present (with a live type statement) before the reload.
  const present = new Map<string, EntityRow>();
  for (const row of w.db.prepare('SELECT id, type, name, key, created_seq, updated_seq FROM entities').all() as EntityRow[]) {
    if (tx.isLive(iris.entity(row.id), RDF_TYPE, iris.cls(row.type))) present.set(row.id, row);
  }
  const desiredEntities = new Map<string, EntityRef>();
  const desiredProps = new Map<string, EntityPropsIn['properties']>();
  const desiredEdges = new Map<string, TripletIn>();
  for (const r of parsed.records) {
    if (r.triplet) {
      const t = r.triplet;
      const s = entityId(t.source);
      const o = entityId(t.target);
      desiredEntities.set(s, desiredEntities.get(s) ?? t.source);
      desiredEntities.set(o, desiredEntities.get(o) ?? t.target);
      desiredEdges.set(`${s}\u0000${relationName(t.relation)}\u0000${o}`, t);
    } else if (r.entity) {
      const id = entityId(r.entity.entity);
      desiredEntities.set(id, r.entity.entity);
      desiredProps.set(id, [...(desiredProps.get(id) ?? []).filter((p) => !r.entity!.properties.some((q) => q.field === p.field)), ...r.entity.properties]);
    }
  }

  let edgesRemoved = 0;
  const removedSample: string[] = [];
  // Current edges not in the payload leave current state (including every edge of a leaving entity).
  const seen = new Set<string>();
  for (const id of present.keys()) {
    for (const e of tx.currentEdgesTouching(id)) {
      const k = `${e.source_id}\u0000${e.relation}\u0000${e.target_id}`;
      if (seen.has(k)) continue;
      seen.add(k);
      if (!desiredEdges.has(k) && tx.retractEdge(e) !== null) edgesRemoved++;
    }
  }
  let entitiesRemoved = 0;
  for (const [id, row] of present) {
    if (desiredEntities.has(id)) continue;
    tx.purgeProperties(id);
    tx.removePresence(row);
    entitiesRemoved++;
    if (removedSample.length < 20) removedSample.push(`${row.type}/${row.name}`);
  }
  let entitiesAdded = 0;
  let entitiesChanged = 0;
  for (const [id, ref] of desiredEntities) {
    if (present.has(id)) entitiesChanged++;
    else entitiesAdded++;
    tx.entity(ref);
    tx.setProperties(id, desiredProps.get(id) ?? [], [], 'replace');
  }
  let edgesAdded = 0;
  let edgesChanged = 0;
  for (const [k, t] of desiredEdges) {
    const [s, rel, o] = k.split('\u0000') as [string, string, string];
    const current = tx.isCurrent({ source_id: s, relation: rel, target_id: o });
    tx.assertEdge(t, 'skip_unchanged');
    if (current) edgesChanged++;
    else edgesAdded++;
  }
  const changed = tx.finish('reload', opts.observedAt);
  const newSeq = changed ? seq : prior;
  const out: Record<string, unknown> = {
    dry_run: opts.dryRun,
    idempotency_key: mintKey(key),
    idempotent_replay: false,
    graph_created: created,
    lines_read: parsed.linesRead,
    entities_added: entitiesAdded,
    entities_removed: entitiesRemoved,
    entities_changed: entitiesChanged,
    edges_added: edgesAdded,
    edges_removed: edgesRemoved,
    edges_changed: edgesChanged,
    error_count: parsed.errorCount,
    errors: parsed.errors,
    prior_commit_seq: prior,
    prior_snapshot_token: snapshotToken(prior),
    new_commit_seq: opts.dryRun ? (changed ? seq : prior) : newSeq,
    new_snapshot_token: snapshotToken(opts.dryRun ? (changed ? seq : prior) : newSeq),
    no_op: !changed,
    removed_sample: removedSample,
  };
  if (!opts.dryRun) {
    if (changed) markGraphCreatedAfter(w);
    remember(w, key, route, hash, out, changed ? seq : null);
  }
  await finishWrite(w, changed);
  return { status: 200, body: out };
}

// ---------------------------------------------------------------- lifecycle

/** POST /v1/graph/delete: every live statement and property leaves current state; history stays. */
export async function deleteGraph(w: WriteCoordinator, key: string | null, graph: string): Promise<WriteOutcome> {
  const route = 'POST /v1/graph/delete';
  const hash = requestHash(route, { graph });
  const prior = priorOutcome(w, key, route, hash, (b) => b);
  if (prior) return prior;
  const seq = w.begin();
  const db = w.db;
  const at = new Date().toISOString();
  // Every current triplet edge gets its retract event, so history and as-of reads see the delete.
  db.prepare(
    `INSERT INTO edge_events (seq, op, source_id, relation, target_id, confidence, at, supersedes)
     SELECT ?, 'retract', e.source_id, e.relation, e.target_id, 0, ?, json_array(CAST(e.id AS TEXT))
       FROM edge_events e JOIN (SELECT MAX(id) AS id FROM edge_events GROUP BY source_id, relation, target_id) l ON l.id = e.id
      WHERE e.op = 'assert'`,
  ).run(seq, at);
  const removed = db.prepare('UPDATE quads SET removed_seq = ? WHERE removed_seq IS NULL').run(seq).changes;
  db.prepare('UPDATE entity_props SET removed_seq = ? WHERE removed_seq IS NULL').run(seq);
  const changed = removed > 0;
  if (changed) {
    db.prepare("INSERT INTO commits (seq, committed_at, observed_at, kind, added, removed, meta) VALUES (?, ?, NULL, 'delete', 0, ?, NULL)")
      .run(seq, new Date().toISOString(), removed);
    w.clear();
  }
  const body = { ok: true, graph_id: graph, deleted_branches: 1, deleted_objects: removed, deleted_feedback_objects: 0, deleted_bytes: 0 };
  remember(w, key, route, hash, body, changed ? seq : null);
  if (changed) await w.commit();
  else await w.commitWithoutDelta();
  return { status: 200, body };
}

export { timestamp };
