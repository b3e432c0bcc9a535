import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { ApiError, badRequest } from './errors.js';

function tooLarge(limit: number): ApiError {
  return new ApiError(413, 'invalid_request_error', 'payload_too_large',
    `the request body is larger than the limit of ${limit} bytes; split the data into several requests`, { param: 'body', retryable: false });
}

/** What a route hands readBodyLimited: Hono's context (its node-server bindings carry the Node request). */
export interface BodySource {
  req: { raw: Request };
  env?: unknown;
}

/**
 * Reads a request body into one buffer, refusing (413) as soon as it passes `limit` —
 * before anything is parsed or written.
 */
export async function readBodyLimited(c: BodySource, limit: number): Promise<Uint8Array> {
  const req = c.req.raw;
  const declared = req.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit);
  const incoming = untouchedIncoming(c.env);
  return incoming ? readIncoming(incoming, limit) : readWebStream(req, limit);
}

/**
 * The Node request behind Hono's Request, if its body has not been touched. Reading it
 * directly skips building a WHATWG Request, AbortSignal and ReadableStream per request,
 * which cost more main-thread time than the rest of a small commit.
 */
function untouchedIncoming(env: unknown): IncomingMessage | null {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof Readable)) return null;
  const msg = incoming as IncomingMessage;
  return msg.readableDidRead || msg.readableFlowing !== null ? null : msg;
}

function readIncoming(incoming: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let total = 0;
    const done = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('close', onClose);
      incoming.off('error', onClose);
    };
    const onData = (d: Buffer) => {
      total += d.byteLength;
      if (total > limit) {
        done();
        incoming.resume(); // discard the rest; the 413 goes out on the same connection
        reject(tooLarge(limit));
        return;
      }
      parts.push(d);
    };
    const onEnd = () => {
      done();
      resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, total));
    };
    const onClose = () => {
      done();
      reject(badRequest('body_read_failed', 'the request body could not be read completely (connection closed?)', 'body'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('close', onClose);
    incoming.on('error', onClose);
  });
}

async function readWebStream(req: Request, limit: number): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch {
      throw badRequest('body_read_failed', 'the request body could not be read completely (connection closed?)', 'body');
    }
    if (r.done) break;
    total += r.value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    parts.push(r.value);
  }
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.byteLength;
  }
  return out;
}

export function decodeUtf8(bytes: Uint8Array, param = 'body'): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('invalid_encoding', 'the request body is not valid UTF-8', param);
  }
}

function decodeFormComponent(s: string, where: string, param: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw badRequest('invalid_encoding', `the ${where} is not percent-encoded UTF-8 (application/x-www-form-urlencoded)`, param);
  }
}

/**
 * Parses application/x-www-form-urlencoded text like URLSearchParams, but refuses (400)
 * escapes that are not UTF-8 — URLSearchParams turns them into U+FFFD, so a query in
 * another encoding would silently match nothing.
 */
export function parseForm(text: string, where: 'query string' | 'form body'): URLSearchParams {
  const out = new URLSearchParams();
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decodeFormComponent(eq < 0 ? part : part.slice(0, eq), where, where === 'form body' ? 'body' : 'query string');
    out.append(key, eq < 0 ? '' : decodeFormComponent(part.slice(eq + 1), where, key));
  }
  return out;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when a string or key anywhere in the value is not well-formed UTF-16. */
function hasLoneSurrogate(v: unknown): boolean {
  if (typeof v === 'string') return LONE_SURROGATE.test(v);
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  if (typeof v === 'object' && v !== null) return Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(x));
  return false;
}

/**
 * Parses a JSON object body with a clear error for anything else. A \uD800-\uDFFF escape
 * without its pair is refused: such a string is not Unicode text, and SQLite would store
 * something other than what the head holds.
 */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  const text = decodeUtf8(bytes);
  if (text.trim() === '') throw badRequest('invalid_json', 'the request body is empty; a JSON object is required', 'body');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw badRequest('invalid_json', `the request body is not valid JSON: ${(e as Error).message}`, 'body');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest('invalid_json', 'the request body must be a JSON object', 'body');
  if (/\\u[dD][89a-fA-F]/.test(text) && hasLoneSurrogate(v)) {
    throw badRequest('invalid_encoding', 'a string in the body has an unpaired UTF-16 surrogate escape (\\uD800-\\uDFFF); text must be valid Unicode', 'body');
  }
  return v as Record<string, unknown>;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | null | undefined): { type: string | null; charset: string | null } {
  if (!header) return { type: null, charset: null };
  const [t, ...params] = header.split(';');
  let charset: string | null = null;
  for (const p of params) {
    const m = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(p);
    if (m) charset = m[1]!.toLowerCase();
  }
  return { type: t!.trim().toLowerCase() || null, charset };
}
