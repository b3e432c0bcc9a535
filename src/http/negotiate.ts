import Negotiator from 'negotiator';
import { ApiError } from './errors.js';

/** Media types offered for SELECT / ASK results, first = default. Aliases map to the engine's format. */
export const RESULTS_TYPES: Record<string, string> = {
  'application/sparql-results+json': 'application/sparql-results+json',
  'application/sparql-results+xml': 'application/sparql-results+xml',
  'text/csv': 'text/csv',
  'text/tab-separated-values': 'text/tab-separated-values',
  'application/json': 'application/sparql-results+json',
  'application/xml': 'application/sparql-results+xml',
  'text/xml': 'application/sparql-results+xml',
};

/** Media types offered for CONSTRUCT / DESCRIBE results, first = default. */
export const GRAPH_TYPES: Record<string, string> = {
  'text/turtle': 'text/turtle',
  'application/n-triples': 'application/n-triples',
  'application/n-quads': 'application/n-quads',
  'application/trig': 'application/trig',
  'application/rdf+xml': 'application/rdf+xml',
  'application/ld+json': 'application/ld+json',
  'text/plain': 'application/n-triples',
  'application/x-turtle': 'text/turtle',
};

/**
 * Chooses the response media type from Accept (q-values and wildcards honoured); the
 * first offered type wins ties and answers a missing Accept. None acceptable → 406.
 */
export function negotiate(accept: string | undefined, offered: Record<string, string>): { mediaType: string; engineFormat: string } {
  const types = Object.keys(offered);
  if (!accept || accept.trim() === '') return { mediaType: types[0]!, engineFormat: offered[types[0]!]! };
  // Every body is written in UTF-8, so `charset=utf-8` on a range is satisfied: drop it
  // (Negotiator would otherwise require the offered type to carry the same parameter).
  const ranges = accept.replace(/;\s*charset\s*=\s*"?utf-?8"?\s*(?=[;,]|$)/gi, '');
  const chosen = new Negotiator({ headers: { accept: ranges } }).mediaType(types);
  if (!chosen) {
    throw new ApiError(406, 'invalid_request_error', 'not_acceptable',
      `none of the media types in Accept can be produced for this result; available: ${types.join(', ')}`, { param: 'Accept' });
  }
  return { mediaType: chosen, engineFormat: offered[chosen]! };
}
