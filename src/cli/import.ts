import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, createReadStream, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { extname, join, basename } from 'node:path';
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { progress } from './progress.js';
import { openDb } from '../store/db.js';
import { WriteCoordinator } from '../store/write-tx.js';
import { importRdf } from '../store/rdf-import.js';
import { Iris } from '../model/triplets.js';
import { JobRunner, getJob, jobStatus } from '../jobs/job-runner.js';
import { spoolDir } from '../jobs/spool.js';
import { readPidFile, removePidFile, writePidFile } from '../util/pid-file.js';
import type { RdfImportParams } from '../store/writer-protocol.js';

export type FileKind = 'ndjson' | RdfImportParams['format'];

const BY_EXT: Record<string, FileKind> = {
  '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.nt': 'ntriples', '.ntriples': 'ntriples', '.nq': 'nquads', '.nquads': 'nquads',
  '.ttl': 'turtle', '.turtle': 'turtle', '.trig': 'trig',
};

export interface ImportOptions {
  url: string | null;
  token: string | null;
  dataDir: string | null;
  format: FileKind | null;
  batch: number | null;
  strict: boolean;
  graphUri: string | null;
  baseIri: string | null;
  iriBase: string;
  maxRequestBytes: number;
}

export class ImportError extends Error {}

export function kindOf(file: string, forced: FileKind | null): FileKind {
  if (forced) return forced;
  const k = BY_EXT[extname(file).toLowerCase()];
  if (!k) throw new ImportError(`${file}: cannot tell the format from the extension; pass --format (ndjson, ntriples, nquads, turtle, trig)`);
  return k;
}

/** sha256 of the options and the file's bytes, read as a stream (the file may be larger than memory). */
async function fileHash(file: string, options: unknown): Promise<string> {
  const h = createHash('sha256').update(JSON.stringify(options));
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Reads a line-based RDF file as request bodies of at most `max` bytes, cut at line boundaries, one at a time. */
function* lineChunks(file: string, size: number, max: number): Generator<Buffer> {
  const fd = openSync(file, 'r');
  try {
    let pos = 0;
    while (pos < size) {
      const buf = Buffer.allocUnsafe(Math.min(max, size - pos));
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      let end = n;
      if (pos + n < size) {
        const nl = buf.lastIndexOf(10, n - 1);
        if (nl < 0) throw new ImportError(`${file}: a line is longer than the request limit`);
        end = nl + 1;
      }
      yield buf.subarray(0, end);
      pos += end;
    }
  } finally {
    closeSync(fd);
  }
}

/** The request bodies of an RDF file (produced as they are sent) and their total size. */
function rdfChunks(file: string, kind: RdfImportParams['format'], max: number): { total: number; chunks: Iterable<Buffer> } {
  const total = statSync(file).size;
  if (kind === 'ntriples' || kind === 'nquads') return { total, chunks: lineChunks(file, total, max) };
  if (total > max) throw new ImportError(`${file}: ${kind} cannot be split and is larger than the ${max}-byte request limit; convert it to N-Triples/N-Quads`);
  return { total, chunks: [readFileSync(file)] };
}

// ------------------------------------------------------------------ online

async function call(o: ImportOptions, method: string, path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const headers = new Headers(init.headers);
  if (o.token) headers.set('authorization', `Bearer ${o.token}`);
  const res = await fetch(o.url! + path, { ...init, method, headers, duplex: 'half' } as RequestInit);
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const err = (body.error ?? {}) as { code?: string; message?: string };
    throw new ImportError(`${method} ${path}: ${res.status} ${err.code ?? ''} ${err.message ?? text}`.trim());
  }
  return body;
}

async function onlineNdjson(file: string, o: ImportOptions) {
  const options = { batch: o.batch, strict: o.strict };
  const key = 'cli-' + (await fileHash(file, options)).slice(0, 48);
  const qs = new URLSearchParams();
  if (o.batch) qs.set('batch', String(o.batch));
  if (o.strict) qs.set('strict', 'true');
  const size = statSync(file).size;
  const bar = progress(basename(file), size, 'bytes');
  const accepted = await call(o, 'POST', `/v1/graph/import-jobs?${qs}`, {
    headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': key, 'content-length': String(size) },
    body: Readable.toWeb(createReadStream(file)) as ReadableStream,
  });
  const id = accepted.job_id as string;
  for (;;) {
    const st = await call(o, 'GET', `/v1/graph/import-jobs?job_id=${encodeURIComponent(id)}`);
    const p = st.progress as { bytes_processed: number; lines_read: number; error_count: number };
    bar.update(p.bytes_processed, p.lines_read);
    const state = st.state as string;
    if (['succeeded', 'failed', 'cancelled'].includes(state)) {
      bar.stop();
      const failure = st.failure as { message?: string } | null;
      const summary = `${file}: ${state}, ${p.lines_read} lines, commit_seq ${st.committed_commit_seq ?? '-'}, ${p.error_count} bad lines (job ${id})`;
      if (state !== 'succeeded') throw new ImportError(`${summary}${failure?.message ? `: ${failure.message}` : ''}`);
      return summary;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function onlineRdf(file: string, kind: RdfImportParams['format'], o: ImportOptions) {
  const { total, chunks } = rdfChunks(file, kind, o.maxRequestBytes);
  const bar = progress(basename(file), total, 'bytes');
  let sent = 0;
  let triples = 0;
  let seq: unknown = null;
  for (const chunk of chunks) {
    const qs = new URLSearchParams({ format: kind });
    if (o.graphUri) qs.set('graph_uri', o.graphUri);
    if (o.baseIri) qs.set('base_iri', o.baseIri);
    if (o.strict) qs.set('strict', 'true');
    // Publication once, after the last chunk.
    if (sent + chunk.length < total) qs.set('build', 'false');
    const key = 'cli-' + createHash('sha256').update(qs.toString()).update(chunk).digest('hex').slice(0, 48);
    const out = await call(o, 'POST', `/v1/graph/import/rdf?${qs}`, {
      headers: { 'content-type': 'application/octet-stream', 'idempotency-key': key },
      body: chunk as unknown as BodyInit,
    });
    sent += chunk.length;
    triples += out.triples_read as number;
    seq = out.committed_commit_seq ?? seq;
    bar.update(sent, triples);
  }
  bar.stop();
  return `${file}: ${triples} statements read, last commit_seq ${seq ?? '-'}`;
}

// ------------------------------------------------------------------ offline

/** Runs the writer's own code in this process against a data directory no server is using. */
async function offline(files: string[], o: ImportOptions): Promise<string[]> {
  const dataDir = o.dataDir!;
  const pid = readPidFile(dataDir);
  if (pid !== null) throw new ImportError(`${dataDir} is in use by a running stackd (pid ${pid}); import through it with --url instead`);
  const db = openDb(dataDir);
  // Claim the directory while writing: a server (or another offline import) started meanwhile refuses it.
  writePidFile(dataDir);
  const w = new WriteCoordinator(db, () => undefined);
  const iris = new Iris(o.iriBase);
  const out: string[] = [];
  try {
    for (const file of files) {
      const kind = kindOf(file, o.format);
      if (kind === 'ndjson') {
        const dir = spoolDir(dataDir);
        mkdirSync(dir, { recursive: true });
        const upload = `upload-${randomUUID()}.part`;
        copyFileSync(file, join(dir, upload));
        const runner = new JobRunner(w, iris, dataDir, 7 * 86_400_000);
        const options = { batch: o.batch ?? 10_000, strict: o.strict };
        const created = runner.create({
          key: 'cli-offline-' + randomUUID(), hash: await fileHash(file, options), uploadFile: upload,
          bytes: statSync(file).size, batch: options.batch, strict: options.strict, observedAt: null,
        });
        const id = created.body.job_id as string;
        const bar = progress(basename(file), statSync(file).size, 'bytes');
        while (await runner.step()) {
          const job = getJob(db, id)!;
          bar.update(job.bytes_processed, job.lines_read);
          if (!['queued', 'running', 'cancellation_requested'].includes(job.state)) break;
        }
        bar.stop();
        const st = jobStatus(getJob(db, id)!, 0);
        const line = `${file}: ${st.state}, ${st.progress.lines_read} lines, commit_seq ${st.committed_commit_seq ?? '-'}, ${st.progress.error_count} bad lines`;
        if (st.state !== 'succeeded') throw new ImportError(`${line}${st.failure ? `: ${st.failure.message}` : ''}`);
        out.push(line);
      } else {
        const { total, chunks } = rdfChunks(file, kind, o.maxRequestBytes);
        const bar = progress(basename(file), total, 'bytes');
        let sent = 0;
        let triples = 0;
        for (const chunk of chunks) {
          const r = await importRdf(w, o.iriBase, chunk, {
            format: kind, baseIri: o.baseIri, graphUri: o.graphUri, blankNodeScope: null, strict: o.strict, build: true,
            observedAt: null, batch: null, edgeIdempotency: 'skip_unchanged', resourceType: null,
          }, null);
          sent += chunk.length;
          triples += r.body.triples_read as number;
          bar.update(sent, triples);
        }
        bar.stop();
        out.push(`${file}: ${triples} statements read`);
      }
    }
  } finally {
    db.close();
    removePidFile(dataDir);
  }
  return out;
}

export async function runImport(files: string[], o: ImportOptions): Promise<string[]> {
  for (const f of files) {
    if (!existsSync(f)) throw new ImportError(`${f}: no such file`);
    kindOf(f, o.format);
  }
  if (!o.url) return offline(files, o);
  const out: string[] = [];
  for (const file of files) {
    const kind = kindOf(file, o.format);
    out.push(kind === 'ndjson' ? await onlineNdjson(file, o) : await onlineRdf(file, kind, o));
  }
  return out;
}
