import { ApiError, badRequest } from '../http/errors.js';
import { GRAPH_TYPES, RESULTS_TYPES, negotiate } from '../http/negotiate.js';
import { hasDatasetClause, queryForm, type QueryForm } from '../model/sparql-form.js';
import { isAbsoluteIri } from '../model/rdf-terms.js';
import type { HeadPool } from '../store/head-pool.js';

export interface SparqlRequest {
  query: string;
  accept?: string;
  /** Forces a results format (sparql-text always answers JSON). */
  resultsFormat?: string;
  defaultGraphs?: string[];
  namedGraphs?: string[];
  /** Forms this caller accepts. */
  allowedForms?: QueryForm[];
}

export interface SparqlResult {
  form: QueryForm | null;
  mediaType: string;
  body: string;
  seq: number;
}

export function checkGraphIris(iris: string[] | undefined, param: string) {
  for (const g of iris ?? []) {
    if (!isAbsoluteIri(g)) throw badRequest('invalid_graph_uri', `"${g}" in ${param} is not an absolute IRI`, param);
  }
}

/** Runs one SPARQL query on a head replica, choosing the result format first. */
export async function runSparql(heads: Pick<HeadPool, 'query'>, union: boolean, req: SparqlRequest): Promise<SparqlResult> {
  const form = queryForm(req.query);
  if (form === 'UPDATE') {
    throw badRequest('update_not_supported',
      'SPARQL Update is not accepted here: /sparql serves the query operation; write with /v1/graph/import/rdf or the /v1/graph write routes', 'query');
  }
  if (form && req.allowedForms && !req.allowedForms.includes(form)) {
    throw badRequest('unsupported_query_form', `${form} queries are not accepted here (accepted: ${req.allowedForms.join(', ')})`, 'query');
  }
  checkGraphIris(req.defaultGraphs, 'default-graph-uri');
  checkGraphIris(req.namedGraphs, 'named-graph-uri');
  let mediaType: string;
  let engineFormat: string;
  if (req.resultsFormat) {
    mediaType = engineFormat = req.resultsFormat;
  } else {
    const graphForm = form === 'CONSTRUCT' || form === 'DESCRIBE';
    try {
      ({ mediaType, engineFormat } = negotiate(req.accept, graphForm ? GRAPH_TYPES : RESULTS_TYPES));
    } catch (e) {
      // Text that does not start like a query: the engine's syntax error (400) says more than 406.
      if (form !== null) throw e;
      mediaType = engineFormat = 'application/sparql-results+json';
    }
  }
  const dataset = req.defaultGraphs?.length || req.namedGraphs?.length;
  const reply = await heads.query({
    query: req.query,
    resultsFormat: engineFormat,
    // FROM / FROM NAMED in the query define its dataset; the union default graph would override them.
    union: union && !hasDatasetClause(req.query),
    ...(dataset ? { defaultGraphs: req.defaultGraphs ?? [], namedGraphs: req.namedGraphs ?? [] } : {}),
  });
  if (!reply.ok) {
    if (reply.kind === 'syntax') throw badRequest('sparql_syntax_error', `SPARQL syntax error: ${reply.message}`, 'query');
    if (reply.kind === 'format') {
      throw new ApiError(406, 'invalid_request_error', 'not_acceptable', `the result cannot be written as ${mediaType}: ${reply.message}`, { param: 'Accept' });
    }
    throw badRequest('query_evaluation_error', `the query could not be evaluated: ${reply.message}`, 'query');
  }
  return { form, mediaType, body: reply.body, seq: reply.seq };
}
