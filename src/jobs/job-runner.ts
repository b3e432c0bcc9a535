import { randomUUID } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DB } from '../store/db.js';
import { WriteFailure, type WriteCoordinator } from '../store/write-tx.js';
import { GraphTx } from '../store/graph-tx.js';
import { applyRecords, parseNdjson, type NdjsonParse } from '../store/triplet-writes.js';
import type { Iris } from '../model/triplets.js';
import { readLines, spoolDir, type LineBatch } from './spool.js';

export type JobState = 'queued' | 'running' | 'cancellation_requested' | 'cancelled' | 'succeeded' | 'failed';

export interface JobRow {
  id: string;
  idempotency_key: string;
  content_hash: string;
  state: JobState;
  stage: string;
  spool: string | null;
  upload_bytes: number;
  batch: number;
  strict: number;
  observed_at: string | null;
  bytes_processed: number;
  lines_read: number;
  triplets: number;
  properties: number;
  observations: number;
  groups_committed: number;
  error_count: number;
  errors: string;
  committed_commit_seq: number | null;
  failure: string | null;
  attempts: number;
  enqueued_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface CreateJobInput {
  key: string;
  hash: string;
  /** Spool file (already fsynced) under <data_dir>/spool, named by the upload. */
  uploadFile: string;
  bytes: number;
  batch: number;
  strict: boolean;
  observedAt: string | null;
}

const MAX_ERRORS = 100;
/** Failed tries of one group in a row before the job fails. */
const MAX_ATTEMPTS = 5;
const TERMINAL: JobState[] = ['cancelled', 'succeeded', 'failed'];

interface LineError {
  line: number;
  message: string;
}

export const isTerminal = (s: JobState) => TERMINAL.includes(s);

export function getJob(db: DB, id: string): JobRow | undefined {
  return db.prepare('SELECT * FROM import_jobs WHERE id = ?').get(id) as JobRow | undefined;
}

/** Accepted-response body for a job. */
export function accepted(job: JobRow, replay: boolean) {
  return { job_id: job.id, state: job.state, idempotent_replay: replay, upload_bytes: job.upload_bytes };
}

/**
 * Durable import jobs, run inside the writer: one group of records per step, each step one
 * SQLite transaction holding the group's commit AND the job's new spool offset, so a crash
 * at any point resumes exactly after the last committed group: no record twice, none lost.
 */
export class JobRunner {
  constructor(
    private readonly w: WriteCoordinator,
    private readonly iris: Iris,
    private readonly dataDir: string,
    private readonly retentionMs: number,
  ) {}

  private get db() {
    return this.w.db;
  }

  private spoolPath(name: string) {
    return join(spoolDir(this.dataDir), name);
  }

  /** Registers an upload as a job, or resolves it to the job its key already names. */
  create(input: CreateJobInput): { status: number; body: Record<string, unknown> } {
    const prior = this.db.prepare('SELECT * FROM import_jobs WHERE idempotency_key = ?').get(input.key) as JobRow | undefined;
    if (prior) {
      rmSync(this.spoolPath(input.uploadFile), { force: true });
      if (prior.content_hash !== input.hash) {
        throw new WriteFailure(409, 'idempotency_key_reused',
          'this Idempotency-Key already names an import job with different content or options; use a new key', 'Idempotency-Key');
      }
      return { status: 200, body: accepted(prior, true) };
    }
    const id = 'ij_' + randomUUID().replace(/-/g, '');
    const spool = `${id}.ndjson`;
    renameSync(this.spoolPath(input.uploadFile), this.spoolPath(spool));
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO import_jobs (id, idempotency_key, content_hash, state, stage, spool, upload_bytes, batch, strict, observed_at, enqueued_at, updated_at)
         VALUES (?, ?, ?, 'queued', 'queued', ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, input.key, input.hash, spool, input.bytes, input.batch, input.strict ? 1 : 0, input.observedAt, now, now);
    return { status: 202, body: accepted(getJob(this.db, id)!, false) };
  }

  cancel(id: string): { job_id: string; state: JobState } {
    const job = getJob(this.db, id);
    if (!job) throw new WriteFailure(404, 'job_not_found', `no import job ${id}`, 'job_id');
    if (job.state === 'queued' || job.state === 'running') {
      this.db.prepare("UPDATE import_jobs SET state = 'cancellation_requested', updated_at = ? WHERE id = ?").run(new Date().toISOString(), id);
      return { job_id: id, state: 'cancellation_requested' };
    }
    return { job_id: id, state: job.state };
  }

  /** The job to work on next: the oldest one not yet terminal. */
  next(): JobRow | undefined {
    return this.db
      .prepare("SELECT * FROM import_jobs WHERE state IN ('queued', 'running', 'cancellation_requested') ORDER BY enqueued_at, id LIMIT 1")
      .get() as JobRow | undefined;
  }

  private finish(job: JobRow, state: JobState, extra: Record<string, unknown> = {}) {
    const now = new Date().toISOString();
    const sets = ['state = @state', "stage = @stage", 'updated_at = @now', 'finished_at = @now', 'spool = NULL'];
    const params: Record<string, unknown> = { id: job.id, state, stage: state === 'succeeded' ? 'completed' : job.stage === 'queued' ? 'queued' : job.stage, now };
    for (const [k, v] of Object.entries(extra)) {
      sets.push(`${k} = @${k}`);
      params[k] = v;
    }
    this.db.prepare(`UPDATE import_jobs SET ${sets.join(', ')} WHERE id = @id`).run(params);
  }

  private removeSpool(job: JobRow) {
    if (job.spool) rmSync(this.spoolPath(job.spool), { force: true });
  }

  /**
   * One step of the oldest unfinished job: cancel it, commit its next group, or finish it.
   * Returns false when there is nothing to do.
   */
  async step(): Promise<boolean> {
    const job = this.next();
    if (!job) return false;
    if (job.state === 'cancellation_requested') {
      this.finish(job, 'cancelled');
      this.removeSpool(job);
      return true;
    }
    if (!job.spool || !existsSync(this.spoolPath(job.spool))) {
      this.finish(job, 'failed', {
        failure: JSON.stringify(this.failure(job, 'spool_missing', 'the uploaded data is missing from the data directory; submit the import again', false)),
      });
      return true;
    }
    const batch = readLines(this.spoolPath(job.spool), job.bytes_processed, job.batch);
    if (batch.lines.length === 0 && batch.eof) {
      // A job whose records were all present already (or all bad) made no commit: its records
      // are visible at the current head, which is what it reports and what publication is due at.
      this.finish(job, 'succeeded', job.committed_commit_seq === null ? { committed_commit_seq: this.w.headSeq() } : {});
      this.removeSpool(job);
      return true;
    }
    const text = batch.lines.map((l) => l ?? '\u0000').join('\n');
    const parsed = parseNdjson(text, false);
    const errors = JSON.parse(job.errors) as LineError[];
    const lineErrors: LineError[] = parsed.errors.map((e) => ({
      line: e.line + job.lines_read,
      message: batch.lines[e.line - 1] === null ? 'not valid UTF-8' : e.message,
    }));
    if (job.strict && lineErrors.length > 0) {
      const first = lineErrors[0]!;
      this.finish(job, 'failed', {
        error_count: job.error_count + 1,
        errors: JSON.stringify([...errors, first].slice(0, MAX_ERRORS)),
        failure: JSON.stringify(this.failure(job, 'invalid_line', `line ${first.line}: ${first.message}`, false)),
      });
      this.removeSpool(job);
      return true;
    }
    try {
      await this.commitGroup(job, batch, parsed, errors, lineErrors);
    } catch (e) {
      // Nothing of the group was written (the offset did not move): it is retried on the next
      // turn, up to MAX_ATTEMPTS times in a row; then the job fails instead of blocking every job after it.
      if (this.w.isOpen) await this.w.abort().catch(() => undefined);
      const attempts = job.attempts + 1;
      const first = job.lines_read + 1;
      const message = `the group of lines ${first}-${first + batch.lines.length - 1} could not be committed: ${(e as Error).message}`;
      // A group that does not fit in the head store will not fit on a retry either.
      const full = e instanceof WriteFailure && e.code === 'store_capacity_exceeded';
      if (attempts >= MAX_ATTEMPTS || full) {
        const retryable = (e as { code?: string }).code === 'SQLITE_FULL';
        const code = full ? 'store_capacity_exceeded' : 'group_failed';
        this.finish(job, 'failed', { attempts, failure: JSON.stringify(this.failure(job, code, message, retryable)) });
        this.removeSpool(job);
        return true;
      }
      this.db.prepare('UPDATE import_jobs SET attempts = ?, updated_at = ? WHERE id = ?').run(attempts, new Date().toISOString(), job.id);
      throw new Error(`${job.id}: ${message} (attempt ${attempts} of ${MAX_ATTEMPTS})`);
    }
    return true;
  }

  /** Commits one group: its records and the job's new offset and counters in one transaction. */
  private async commitGroup(
    job: JobRow, batch: LineBatch, parsed: NdjsonParse, errors: LineError[], lineErrors: LineError[],
  ): Promise<void> {
    const seq = this.w.begin();
    const tx = new GraphTx(this.w, this.iris, seq, job.observed_at ?? new Date().toISOString());
    const { triplets, properties, observations } = applyRecords(tx, parsed.records);
    const changed = tx.finish('import_job', job.observed_at, { job_id: job.id, group: job.groups_committed });
    if (changed) this.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('graph_created_at', ?)").run(new Date().toISOString());
    const allErrors = [...errors, ...lineErrors].slice(0, MAX_ERRORS);
    this.db
      .prepare(
        `UPDATE import_jobs SET state = 'running', stage = 'committing_group', bytes_processed = @bytes, lines_read = @lines,
           triplets = triplets + @triplets, properties = properties + @properties, observations = observations + @observations,
           groups_committed = groups_committed + 1, error_count = error_count + @errs, errors = @errors,
           committed_commit_seq = COALESCE(@seq, committed_commit_seq), attempts = 0, updated_at = @now
         WHERE id = @id`,
      )
      .run({
        id: job.id, bytes: job.bytes_processed + batch.bytes, lines: job.lines_read + batch.lines.length, triplets, properties, observations,
        errs: parsed.errorCount, errors: JSON.stringify(allErrors), seq: changed ? seq : null, now: new Date().toISOString(),
      });
    // The group's statements and the job's offset commit together.
    if (changed) await this.w.commit();
    else await this.w.commitWithoutDelta();
  }

  private failure(job: JobRow, code: string, message: string, retryable: boolean) {
    return { code, message, retryable, stage: job.stage, attempts: job.attempts + 1, diagnostic_id: `diag_${job.id.slice(3, 19)}` };
  }

  /** Forgets terminal jobs older than the retention period. */
  prune() {
    const cutoff = new Date(Date.now() - this.retentionMs).toISOString();
    this.db.prepare("DELETE FROM import_jobs WHERE state IN ('cancelled', 'succeeded', 'failed') AND finished_at < ?").run(cutoff);
  }
}

/** Status body for GET /v1/graph/import-jobs. */
export function jobStatus(job: JobRow, servedAtSeq: number) {
  const micros = (iso: string) => Date.parse(iso) * 1000;
  const seq = job.committed_commit_seq;
  return {
    job_id: job.id,
    state: job.state,
    progress: {
      upload_bytes: job.upload_bytes,
      bytes_processed: job.bytes_processed,
      lines_read: job.lines_read,
      triplets: job.triplets,
      properties: job.properties,
      observations: job.observations,
      groups_committed: job.groups_committed,
      error_count: job.error_count,
      errors: JSON.parse(job.errors),
      committed_commit_seq: seq,
      stage: job.stage,
      active_group_index: isTerminal(job.state) ? null : job.groups_committed,
      active_group_records: 0,
      active_group_bytes: 0,
    },
    committed_commit_seq: seq,
    failure: job.failure ? JSON.parse(job.failure) : null,
    publication_job:
      job.state === 'succeeded' && seq !== null
        ? { job_id: `pub_${seq}`, disposition: 'queued', status: servedAtSeq >= seq ? 'succeeded' : 'queued', due_seq: seq }
        : null,
    enqueued_at_micros: micros(job.enqueued_at),
    updated_at_micros: micros(job.updated_at),
  };
}
