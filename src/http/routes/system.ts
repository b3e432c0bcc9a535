import type { Hono } from 'hono';
import { API_VERSION, type AppContext } from '../context.js';
import type { Env } from '../middleware.js';
import { headSeq } from '../read-params.js';

/** Capabilities this build really has; SDKs gate features on them. */
export const CAPABILITIES = [
  'sparql_protocol_1_1',
  'sparql_text_v1',
  'rdf_import_v1',
  'rdf_export_v1',
  'graph_summary_v1',
  'idempotency_keys_v1',
  'triplet_commit_v1',
  'commit_dry_run_v1',
  'retract_v1',
  'ndjson_import_v1',
  'declarative_reload_v1',
  'as_of_reads_v1',
  'valid_time_reads_v1',
  'provenance_reads_v1',
  'graph_changes_v1',
  'read_snapshot_v1',
  'durable_import_jobs_v1',
];

export function systemRoutes(app: Hono<Env>, ctx: AppContext) {
  app.get('/version', (c) =>
    c.json({
      version: API_VERSION,
      capabilities: CAPABILITIES,
      git_commit: ctx.build.gitCommit,
      built_at: ctx.build.builtAt,
      persisted_format: ctx.build.persistedFormat,
      server: 'stackd',
      server_version: ctx.build.version,
    }),
  );
  app.get('/healthz', (c) => {
    const ready = ctx.isReady();
    const replicas = ctx.heads.readyCount;
    // A replica being rebuilt (after a query timeout or a write past the store's capacity)
    // is not a reason to restart the process, which would rebuild every replica: still 200.
    const status = !ready ? 'starting' : replicas < ctx.config.queryWorkers ? 'degraded' : 'ok';
    return c.json({ status, ready_replicas: replicas }, ready ? 200 : 503);
  });
}

export function statusRoutes(app: Hono<Env>, ctx: AppContext) {
  app.get('/v1/status', (c) =>
    c.json({
      status: ctx.isReady() ? 'ok' : 'starting',
      version: API_VERSION,
      graph: ctx.config.graph,
      branch: ctx.config.branch,
      head_seq: headSeq(ctx),
      ready_replicas: ctx.heads.readyCount,
      query_workers: ctx.config.queryWorkers,
    }),
  );
}
