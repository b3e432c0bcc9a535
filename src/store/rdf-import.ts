import { parseRdf, RdfSyntaxFailure, type RdfSyntaxError } from '../model/rdf-parse.js';
import { quadLine } from '../model/rdf-terms.js';
import type { RdfImportParams } from './writer-protocol.js';
import { WriteFailure, type WriteCoordinator } from './write-tx.js';
import { findIdempotency, requestHash, saveIdempotency } from './idempotency.js';
import { markGraphCreated } from './graph-meta.js';

const MAX_REPORTED_ERRORS = 100;
const ROUTE = 'POST /v1/graph/import/rdf';

interface PredicateCounts {
  resource: number;
  literal: number;
}

export interface RdfImportOutcome {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

/**
 * POST /v1/graph/import/rdf: parse, dedupe against the live set, write one commit.
 * Parsing, the SQLite insert and the replicas' loads run as a pipeline, chunk by chunk.
 */
export async function importRdf(
  w: WriteCoordinator,
  iriBase: string,
  body: Uint8Array,
  params: RdfImportParams,
  idempotencyKey: string | null,
): Promise<RdfImportOutcome> {
  const db = w.db;
  let hash: string | null = null;
  if (idempotencyKey) {
    hash = requestHash(ROUTE, params, body);
    const prior = findIdempotency(db, idempotencyKey);
    if (prior) {
      if (prior.route !== ROUTE || prior.request_hash !== hash) {
        throw new WriteFailure(
          409,
          'idempotency_key_reused',
          'this Idempotency-Key was already used with a different request; use a new key for new content',
          'Idempotency-Key',
        );
      }
      return { status: prior.status, body: JSON.parse(prior.response), replayed: true };
    }
  }

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new WriteFailure(400, 'invalid_encoding', 'the request body is not valid UTF-8', 'body');
  }

  const insert = db.prepare(
    'INSERT OR IGNORE INTO quads (s, p, o, g, bn, added_seq) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const seq = w.begin();
  let linesRead = 0;
  let triplesRead = 0;
  let imported = 0;
  let resourceTriples = 0;
  let literalTriples = 0;
  let dupResource = 0;
  let dupLiteral = 0;
  let errorCount = 0;
  const errors: RdfSyntaxError[] = [];
  const predicates = new Map<string, PredicateCounts>();
  try {
    for (const chunk of parseRdf(text, params)) {
      linesRead = chunk.linesRead;
      triplesRead = chunk.triplesRead;
      errorCount += chunk.errors.length;
      for (const e of chunk.errors) if (errors.length < MAX_REPORTED_ERRORS) errors.push(e);
      const plain: string[] = [];
      const withBlank: string[] = [];
      for (const q of chunk.quads) {
        const literal = q.o.charCodeAt(0) === 34; /* " */
        if (literal) literalTriples++;
        else resourceTriples++;
        let pc = predicates.get(q.p);
        if (!pc) predicates.set(q.p, (pc = { resource: 0, literal: 0 }));
        if (literal) pc.literal++;
        else pc.resource++;
        if (insert.run(q.s, q.p, q.o, q.g, q.bn ? 1 : 0, seq).changes === 1) {
          imported++;
          (q.bn ? withBlank : plain).push(quadLine(q));
        } else if (literal) dupLiteral++;
        else dupResource++;
      }
      w.load(plain.join('\n'), withBlank.join('\n'));
    }
  } catch (e) {
    await w.abort();
    if (e instanceof RdfSyntaxFailure) {
      const where = e.error.line !== null ? ` (line ${e.error.line}${e.error.column !== null ? `, column ${e.error.column}` : ''})` : '';
      throw new WriteFailure(400, 'rdf_syntax_error', `RDF syntax error${where}: ${e.error.message}; nothing was written`, 'body');
    }
    throw e;
  }

  let committedSeq: number | null = null;
  let graphCreated = false;
  if (imported > 0) {
    db.prepare('INSERT INTO commits (seq, committed_at, observed_at, kind, added, removed, meta) VALUES (?, ?, ?, ?, ?, 0, ?)').run(
      seq,
      new Date().toISOString(),
      params.observedAt,
      'rdf_import',
      imported,
      JSON.stringify({ format: params.format, graph_uri: params.graphUri, blank_node_scope: params.blankNodeScope }),
    );
    graphCreated = markGraphCreated(db);
  }
  const relationIri = `${iriBase}r/rdf_triple`;
  const responseBody: Record<string, unknown> = {
    graph_created: graphCreated,
    lines_read: linesRead,
    triples_read: triplesRead,
    resource_triples: resourceTriples,
    literal_triples: literalTriples,
    duplicate_resource_triples: dupResource,
    duplicate_literal_triples: dupLiteral,
    imported_triplets: imported,
    batches: imported > 0 ? 1 : 0,
    committed_commit_seq: imported > 0 ? seq : null,
    predicate_count: predicates.size,
    predicates: [...predicates.entries()].map(([p, c]) => ({
      uri: p.slice(1, -1),
      relation: 'RDF_TRIPLE',
      lbb_relation_iri: relationIri,
      lbb_predicate_iri: p.slice(1, -1),
      resource_triples: c.resource,
      literal_triples: c.literal,
      triples: c.resource + c.literal,
    })),
    error_count: errorCount,
    errors: errors.map((e) => ({ message: e.message })),
    published_generation: null,
  };
  if (idempotencyKey && hash) {
    saveIdempotency(db, {
      key: idempotencyKey,
      route: ROUTE,
      request_hash: hash,
      status: 200,
      response: JSON.stringify(responseBody),
      commit_seq: imported > 0 ? seq : null,
    });
  }
  if (imported > 0) {
    committedSeq = await w.commit();
    responseBody.committed_commit_seq = committedSeq;
  } else {
    // Nothing new: keep only the idempotency record.
    await w.commitWithoutDelta();
  }
  return { status: 200, body: responseBody, replayed: false };
}
