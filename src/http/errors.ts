/** The hosted plane's error envelope: every non-2xx body is `{"error": {...}}`. */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'api_error';

export interface ApiErrorOptions {
  param?: string | null;
  retryable?: boolean;
  retryAfterSeconds?: number;
  /** Extra headers the response must carry (e.g. WWW-Authenticate). */
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly param: string | null;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    opts: ApiErrorOptions = {},
  ) {
    super(message);
    this.param = opts.param ?? null;
    this.retryable = opts.retryable ?? (status === 429 || status >= 500);
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.headers = opts.headers ?? {};
  }
}

export const DOC_BASE = 'https://github.com/stackd/stackd#errors';

export function errorBody(err: ApiError, requestId: string | null) {
  const body: Record<string, unknown> = {
    type: err.type,
    code: err.code,
    message: err.message,
    param: err.param,
    request_id: requestId,
    doc_url: `${DOC_BASE}-${err.code}`,
    retryable: err.retryable,
  };
  if (err.retryAfterSeconds !== undefined) body.retry_after_seconds = err.retryAfterSeconds;
  return { error: body };
}

export const badRequest = (code: string, message: string, param?: string) =>
  new ApiError(400, 'invalid_request_error', code, message, { param: param ?? null });

export const notFound = (code: string, message: string, param?: string) =>
  new ApiError(404, 'invalid_request_error', code, message, { param: param ?? null });

export const conflict = (code: string, message: string, param?: string) =>
  new ApiError(409, 'invalid_request_error', code, message, { param: param ?? null });

export const unavailable = (code: string, message: string, retryAfterSeconds = 1) =>
  new ApiError(503, 'api_error', code, message, { retryable: true, retryAfterSeconds });
