import type { Hono } from 'hono';
import type { AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { mediaType } from '../body.js';
import { Params, parseRfc3339 } from '../params.js';
import { idempotencyKey } from './writes.js';
import { spoolUpload } from '../../jobs/upload.js';
import { getJob, jobStatus } from '../../jobs/job-runner.js';

const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/json', 'text/plain', 'application/octet-stream']);

/** POST / GET / DELETE /v1/graph/import-jobs — durable NDJSON imports. */
export function importJobRoutes(app: Hono<Env>, ctx: AppContext) {
  app.post('/v1/graph/import-jobs', async (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['batch', 'strict', 'observed_at']);
    const batch = p.int('batch', 1, 10_000) ?? 10_000;
    const strict = p.bool('strict', false);
    const observed = p.string('observed_at');
    const observedAt = observed ? parseRfc3339(observed, 'observed_at') : null;
    const key = idempotencyKey(c);
    if (!key) throw badRequest('idempotency_key_required', 'a durable import needs an Idempotency-Key header, so a retried upload finds its job', 'Idempotency-Key');
    const { type } = mediaType(c.req.header('content-type'));
    if (type !== null && !NDJSON_TYPES.has(type)) {
      throw new ApiError(415, 'invalid_request_error', 'unsupported_media_type', `import jobs take NDJSON (application/x-ndjson), not ${type}`, { param: 'Content-Type' });
    }
    const upload = await spoolUpload(c.req.raw, ctx.config.dataDir, { batch, strict, observedAt });
    const out = await ctx.writer.write({
      op: 'createJob',
      input: { key, hash: upload.hash, uploadFile: upload.file, bytes: upload.bytes, batch, strict, observedAt },
    });
    return c.json(out.body, out.status as 202);
  });

  app.get('/v1/graph/import-jobs', (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['job_id']);
    const id = p.string('job_id');
    if (!id) throw badRequest('missing_parameter', 'parameter "job_id" is required', 'job_id');
    const job = getJob(ctx.readDb, id);
    if (!job) throw notFound('job_not_found', `no import job ${id} (jobs are kept for ${ctx.config.jobRetentionDays} days after they end)`, 'job_id');
    return c.json(jobStatus(job, ctx.servedAtSeq()));
  });

  app.delete('/v1/graph/import-jobs', async (c) => {
    const p = new Params(new URL(c.req.url).searchParams, ['job_id']);
    const id = p.string('job_id');
    if (!id) throw badRequest('missing_parameter', 'parameter "job_id" is required', 'job_id');
    idempotencyKey(c);
    const out = await ctx.writer.write<{ job_id: string; state: string }>({ op: 'cancelJob', jobId: id });
    return c.json(out);
  });
}
