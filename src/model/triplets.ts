import { createHash } from 'node:crypto';
import { badRequest } from '../http/errors.js';
import { realCalendarDate } from '../http/params.js';

/*
 * The fixed generic schema: triplet writes need no ontology. An entity {type, name, key?}
 * is one IRI, stable for its identity (type + key, or type + name); relations, classes and
 * properties get IRIs under the configured base with lower-cased local names.
 */

export interface EntityRef {
  type: string;
  name: string;
  key: string | null;
}

export interface ValidTimeIn {
  start: string | null; // RFC 3339, normalised ISO
  end: string | null;
  granularity: 'instant' | 'day' | 'month' | 'year' | 'unknown';
  sourceText: string | null;
}

export interface EvidenceIn {
  text: string | null;
  sourceId: string | null;
}

export type PropValue =
  | { kind: 'bool'; v: boolean }
  | { kind: 'i64'; v: number }
  | { kind: 'f64'; v: number }
  | { kind: 'date_time'; v: string }
  | { kind: 'keyword'; v: string }
  | { kind: 'text'; v: string }
  | { kind: 'keyword_set'; v: string[] }
  | { kind: 'i64_set'; v: number[] };

export interface PropIn {
  field: string;
  value: PropValue;
}

export interface TripletIn {
  source: EntityRef;
  relation: string;
  target: EntityRef;
  confidence: number;
  evidence: EvidenceIn | null;
  validTime: ValidTimeIn | null;
  properties: PropIn[];
}

export interface EntityPropsIn {
  entity: EntityRef;
  entityId: string | null;
  properties: PropIn[];
  removeFields: string[];
}

const XSD = 'http://www.w3.org/2001/XMLSchema#';
export const RDF_TYPE = '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>';
export const RDFS_LABEL = '<http://www.w3.org/2000/01/rdf-schema#label>';

/** Lower-cased, IRI-safe local name. */
export function localName(name: string): string {
  return encodeURIComponent(name.trim().toLowerCase()).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/**
 * Canonical property field name: trimmed, lower-cased, as stored and shown (attributes,
 * written_properties). Only its IRI is percent-encoded, once, by Iris.property.
 */
export function fieldName(name: string): string {
  return name.trim().toLowerCase();
}

/** 32-hex entity id, a one-way hash of the identity: (type, key) when keyed, else (type, name). */
export function entityId(e: EntityRef): string {
  const identity = e.key !== null ? `k\u0000${e.key}` : `n\u0000${e.name}`;
  return createHash('sha256').update(`${e.type.trim().toLowerCase()}\u0000${identity}`).digest('hex').slice(0, 32);
}

export class Iris {
  constructor(readonly base: string) {}
  entity(id: string): string {
    return `<${this.base}e/${id}>`;
  }
  relation(name: string): string {
    return `<${this.base}r/${localName(name)}>`;
  }
  cls(type: string): string {
    return `<${this.base}class/${localName(type)}>`;
  }
  property(field: string): string {
    return `<${this.base}p/${localName(field)}>`;
  }
  /** The entity id inside an entity IRI (canonical form), or null. */
  entityIdOf(term: string): string | null {
    const prefix = `<${this.base}e/`;
    return term.startsWith(prefix) && term.endsWith('>') ? term.slice(prefix.length, -1) : null;
  }
}

/** A string as a canonical N-Triples literal body. */
export function literal(value: string, datatype?: string): string {
  const esc = value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => {
    switch (c) {
      case '\\': return '\\\\';
      case '"': return '\\"';
      case '\n': return '\\n';
      case '\r': return '\\r';
      case '\t': return '\\t';
      case '\b': return '\\b';
      case '\f': return '\\f';
      default: return '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    }
  });
  return datatype ? `"${esc}"^^<${XSD}${datatype}>` : `"${esc}"`;
}

/** RDF literal(s) for one property value. Sets become one statement per member. */
export function propertyLiterals(v: PropValue): string[] {
  switch (v.kind) {
    case 'bool': return [literal(String(v.v), 'boolean')];
    case 'i64': return [literal(String(v.v), 'integer')];
    case 'f64': return [literal(String(v.v), 'double')];
    case 'date_time': return [literal(v.v, 'dateTime')];
    case 'keyword':
    case 'text': return [literal(v.v)];
    case 'keyword_set': return v.v.map((s) => literal(s));
    case 'i64_set': return v.v.map((n) => literal(String(n), 'integer'));
  }
}

// ---------------------------------------------------------------- validation

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function checkFields(o: Obj, allowed: readonly string[], where: string) {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw badRequest('unknown_field', `unknown field "${k}" in ${where} (accepted: ${allowed.join(', ')})`, `${where}.${k}`);
  }
}

function str(o: Obj, k: string, where: string, required: true): string;
function str(o: Obj, k: string, where: string, required: false): string | null;
function str(o: Obj, k: string, where: string, required: boolean): string | null {
  const v = o[k];
  if (v === undefined || v === null) {
    if (required) throw badRequest('missing_field', `${where}.${k} is required`, `${where}.${k}`);
    return null;
  }
  if (typeof v !== 'string') throw badRequest('invalid_field', `${where}.${k} must be a string`, `${where}.${k}`);
  if (required && v.trim() === '') throw badRequest('invalid_field', `${where}.${k} must not be empty`, `${where}.${k}`);
  return v;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

export function timestamp(v: unknown, where: string): string {
  if (typeof v !== 'string' || !RFC3339.test(v) || Number.isNaN(Date.parse(v)) || !realCalendarDate(v)) {
    throw badRequest('invalid_timestamp', `${where} must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z`, where);
  }
  return new Date(v).toISOString();
}

export function parseEntity(v: unknown, where: string): EntityRef {
  if (v === undefined || v === null) throw badRequest('missing_field', `${where} is required: an object {type, name, key?}`, where);
  if (!isObj(v)) throw badRequest('invalid_field', `${where} must be an object {type, name, key?}`, where);
  checkFields(v, ['type', 'name', 'key'], where);
  return { type: str(v, 'type', where, true), name: str(v, 'name', where, true), key: str(v, 'key', where, false) };
}

function parseValidTime(v: unknown, where: string): ValidTimeIn | null {
  if (v === undefined || v === null) return null;
  if (!isObj(v)) throw badRequest('invalid_field', `${where} must be an object {start?, end?, granularity?, source_text?}`, where);
  checkFields(v, ['start', 'end', 'granularity', 'source_text'], where);
  const start = v.start === undefined || v.start === null ? null : timestamp(v.start, `${where}.start`);
  const end = v.end === undefined || v.end === null ? null : timestamp(v.end, `${where}.end`);
  if (start && end && end < start) throw badRequest('invalid_field', `${where}.end is before ${where}.start`, `${where}.end`);
  const g = v.granularity ?? 'instant';
  if (!['instant', 'day', 'month', 'year', 'unknown'].includes(g as string)) {
    throw badRequest('invalid_field', `${where}.granularity must be instant, day, month, year or unknown`, `${where}.granularity`);
  }
  return { start, end, granularity: g as ValidTimeIn['granularity'], sourceText: str(v, 'source_text', where, false) };
}

function parseEvidence(v: unknown, where: string): EvidenceIn | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return { text: v, sourceId: null };
  if (!isObj(v)) throw badRequest('invalid_field', `${where} must be a string or an object {text?, source_id?}`, where);
  checkFields(v, ['text', 'source_id', 'observation_id', 'region'], where);
  return { text: str(v, 'text', where, false), sourceId: str(v, 'source_id', where, false) };
}

const VALUE_KINDS = ['bool', 'i64', 'f64', 'date_time', 'keyword', 'text', 'keyword_set', 'i64_set'] as const;

function parseValue(v: unknown, where: string): PropValue {
  // Flat shape: JSON scalar, type inferred.
  if (typeof v === 'boolean') return { kind: 'bool', v };
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw badRequest('invalid_field', `${where} must be a finite number`, where);
    return Number.isInteger(v) ? { kind: 'i64', v } : { kind: 'f64', v };
  }
  if (typeof v === 'string') return { kind: 'keyword', v };
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string')) return { kind: 'keyword_set', v: [...new Set(v as string[])].sort() };
    if (v.every((x) => typeof x === 'number' && Number.isInteger(x))) return { kind: 'i64_set', v: [...new Set(v as number[])].sort((a, b) => a - b) };
    throw badRequest('invalid_field', `${where} must be a list of strings or of integers`, where);
  }
  if (!isObj(v)) throw badRequest('invalid_field', `${where} must be a value or {<type>: value}`, where);
  const keys = Object.keys(v);
  if (keys.length !== 1 || !(VALUE_KINDS as readonly string[]).includes(keys[0]!)) {
    throw badRequest('invalid_field', `${where} must be one of {bool|i64|f64|date_time|keyword|text|keyword_set|i64_set: value}`, where);
  }
  const kind = keys[0] as PropValue['kind'];
  const x = v[kind];
  const bad = () => badRequest('invalid_field', `${where}.${kind} has the wrong type`, `${where}.${kind}`);
  switch (kind) {
    case 'bool': if (typeof x !== 'boolean') throw bad(); return { kind, v: x };
    case 'i64': if (typeof x !== 'number' || !Number.isInteger(x)) throw bad(); return { kind, v: x };
    case 'f64': if (typeof x !== 'number' || !Number.isFinite(x)) throw bad(); return { kind, v: x };
    case 'date_time': return { kind, v: timestamp(x, `${where}.date_time`) };
    case 'keyword':
    case 'text': if (typeof x !== 'string') throw bad(); return { kind, v: x };
    case 'keyword_set':
      if (!Array.isArray(x) || !x.every((s) => typeof s === 'string')) throw bad();
      return { kind, v: [...new Set(x as string[])].sort() };
    case 'i64_set':
      if (!Array.isArray(x) || !x.every((n) => typeof n === 'number' && Number.isInteger(n))) throw bad();
      return { kind, v: [...new Set(x as number[])].sort((a, b) => a - b) };
  }
}

/** Verbose `[{field, value}]` or flat `{field: value}`. */
export function parseProperties(v: unknown, where: string): PropIn[] {
  if (v === undefined || v === null) return [];
  const out: PropIn[] = [];
  if (Array.isArray(v)) {
    v.forEach((p, i) => {
      const w = `${where}[${i}]`;
      if (!isObj(p)) throw badRequest('invalid_field', `${w} must be {field, value}`, w);
      checkFields(p, ['field', 'value'], w);
      out.push({ field: str(p, 'field', w, true), value: parseValue(p.value, `${w}.value`) });
    });
  } else if (isObj(v)) {
    for (const [field, value] of Object.entries(v)) {
      if (field.trim() === '') throw badRequest('invalid_field', `${where} has an empty field name`, where);
      out.push({ field, value: parseValue(value, `${where}.${field}`) });
    }
  } else {
    throw badRequest('invalid_field', `${where} must be a list of {field, value} or an object {field: value}`, where);
  }
  const seen = new Set<string>();
  for (const p of out) {
    const k = localName(p.field);
    if (seen.has(k)) throw badRequest('invalid_field', `${where} sets field "${p.field}" twice`, where);
    seen.add(k);
  }
  return out;
}

export function parseTriplet(v: unknown, where: string): TripletIn {
  if (!isObj(v)) throw badRequest('invalid_field', `${where} must be an object {source, relation, target, ...}`, where);
  checkFields(v, ['source', 'relation', 'target', 'confidence', 'evidence', 'valid_time', 'properties'], where);
  const conf = v.confidence;
  if (conf !== undefined && conf !== null && (typeof conf !== 'number' || !(conf >= 0 && conf <= 1))) {
    throw badRequest('invalid_field', `${where}.confidence must be a number from 0 to 1`, `${where}.confidence`);
  }
  return {
    source: parseEntity(v.source, `${where}.source`),
    relation: str(v, 'relation', where, true),
    target: parseEntity(v.target, `${where}.target`),
    confidence: typeof conf === 'number' ? conf : 1,
    evidence: parseEvidence(v.evidence, `${where}.evidence`),
    validTime: parseValidTime(v.valid_time, `${where}.valid_time`),
    properties: parseProperties(v.properties, `${where}.properties`),
  };
}

export function parseEntityProps(v: unknown, where: string): EntityPropsIn {
  if (!isObj(v)) throw badRequest('invalid_field', `${where} must be {type, name, key?, properties}`, where);
  checkFields(v, ['type', 'name', 'key', 'entity_id', 'properties', 'remove_fields'], where);
  const entityIdIn = str(v, 'entity_id', where, false);
  if (entityIdIn !== null && !/^[0-9a-f]{32}$/.test(entityIdIn)) {
    throw badRequest('invalid_field', `${where}.entity_id must be a 32-character hex entity id`, `${where}.entity_id`);
  }
  const removeFields = v.remove_fields ?? [];
  if (!Array.isArray(removeFields) || !removeFields.every((f) => typeof f === 'string')) {
    throw badRequest('invalid_field', `${where}.remove_fields must be a list of field names`, `${where}.remove_fields`);
  }
  const properties = parseProperties(v.properties, `${where}.properties`);
  for (const f of removeFields as string[]) {
    if (properties.some((p) => localName(p.field) === localName(f))) {
      throw badRequest('invalid_field', `${where}: field "${f}" is both set and removed`, `${where}.remove_fields`);
    }
  }
  return {
    entity: { type: str(v, 'type', where, true), name: str(v, 'name', where, true), key: str(v, 'key', where, false) },
    entityId: entityIdIn,
    properties,
    removeFields: removeFields as string[],
  };
}

export interface CommitFileIn {
  triplets: TripletIn[];
  entityProperties: EntityPropsIn[];
  observedAt: string | null;
  edgeIdempotency: 'append' | 'skip_unchanged';
  propertyMerge: 'merge' | 'replace';
  expectedHeadCommitSeq: number | null;
}

/** TripletCommitFile → validated input; every problem is a 400 naming the field. */
export function parseCommitFile(body: Obj): CommitFileIn {
  checkFields(body, ['triplets', 'entity_properties', 'entity_embeddings', 'observed_at', 'edge_idempotency', 'property_merge', 'preconditions'], 'body');
  const triplets = body.triplets ?? [];
  if (!Array.isArray(triplets)) throw badRequest('invalid_field', '"triplets" must be a list', 'triplets');
  const eprops = body.entity_properties ?? [];
  if (!Array.isArray(eprops)) throw badRequest('invalid_field', '"entity_properties" must be a list', 'entity_properties');
  if (Array.isArray(body.entity_embeddings) && body.entity_embeddings.length > 0) {
    throw badRequest('embeddings_unsupported', 'entity_embeddings are not stored by this server (no vector index); send the commit without them', 'entity_embeddings');
  }
  if (triplets.length === 0 && eprops.length === 0) {
    throw badRequest('empty_commit', 'a commit needs at least one triplet or entity_properties entry', 'triplets');
  }
  const ei = body.edge_idempotency ?? 'skip_unchanged';
  if (ei !== 'append' && ei !== 'skip_unchanged') throw badRequest('invalid_field', '"edge_idempotency" must be append or skip_unchanged', 'edge_idempotency');
  const pm = body.property_merge ?? 'merge';
  if (pm !== 'merge' && pm !== 'replace') throw badRequest('invalid_field', '"property_merge" must be merge or replace', 'property_merge');
  let expected: number | null = null;
  if (body.preconditions !== undefined && body.preconditions !== null) {
    if (!isObj(body.preconditions)) throw badRequest('invalid_field', '"preconditions" must be an object', 'preconditions');
    checkFields(body.preconditions, ['expected_head_commit_seq', 'expected_ontology_version', 'expected_snapshot_token'], 'preconditions');
    const e = body.preconditions.expected_head_commit_seq;
    if (e !== undefined && e !== null) {
      if (typeof e !== 'number' || !Number.isInteger(e) || e < 0) throw badRequest('invalid_field', 'preconditions.expected_head_commit_seq must be a non-negative integer', 'preconditions.expected_head_commit_seq');
      expected = e;
    }
  }
  return {
    triplets: triplets.map((t, i) => parseTriplet(t, `triplets[${i}]`)),
    entityProperties: eprops.map((e, i) => parseEntityProps(e, `entity_properties[${i}]`)),
    observedAt: body.observed_at === undefined || body.observed_at === null ? null : timestamp(body.observed_at, 'observed_at'),
    edgeIdempotency: ei,
    propertyMerge: pm,
    expectedHeadCommitSeq: expected,
  };
}
