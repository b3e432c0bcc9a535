import type { MessagePort } from 'node:worker_threads';
import type { CommitFileIn } from '../model/triplets.js';
import type { ImportOptions, ReloadOptions, RetractIn } from './triplet-writes.js';
import type { CreateJobInput } from '../jobs/job-runner.js';

/** Requests the main thread sends the writer worker; every one gets exactly one reply. */
export type WriterRequest =
  | { id: number; op: 'attach'; replicaId: number; port: MessagePort }
  | { id: number; op: 'importRdf'; body: ArrayBuffer; params: RdfImportParams; idempotencyKey: string | null }
  | { id: number; op: 'commit'; file: CommitFileIn; key: string | null; dryRun: boolean }
  | { id: number; op: 'retract'; req: RetractIn; key: string | null }
  | { id: number; op: 'importNdjson'; body: ArrayBuffer; opts: ImportOptions; key: string | null }
  | { id: number; op: 'reload'; body: ArrayBuffer; opts: ReloadOptions; key: string | null }
  | { id: number; op: 'deleteGraph'; key: string | null; graph: string }
  | { id: number; op: 'createJob'; input: CreateJobInput }
  | { id: number; op: 'cancelJob'; jobId: string }
  | { id: number; op: 'close' };

export interface RdfImportParams {
  format: 'ntriples' | 'nquads' | 'turtle' | 'trig';
  baseIri: string | null;
  graphUri: string | null;
  blankNodeScope: string | null;
  strict: boolean;
  build: boolean;
  observedAt: string | null;
  batch: number | null;
  edgeIdempotency: string;
  resourceType: string | null;
}

/** A typed failure the HTTP layer turns into the error envelope. */
export interface WriterFailure {
  status: number;
  type: 'invalid_request_error' | 'api_error';
  code: string;
  message: string;
  param?: string | null;
  retryable?: boolean;
}

export type WriterReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: WriterFailure };

/** Several replies in one message (a commit group). */
export interface WriterReplies {
  replies: WriterReply[];
}

/** Unsolicited events from the writer. */
export type WriterEvent =
  | { event: 'published'; seq: number }
  | { event: 'jobError'; message: string }
  | { event: 'replicaReady'; replicaId: number; seq: number; size: number; ms: number } | { event: 'replicaLost'; replicaId: number; message: string };
