/**
 * Durable import jobs (POST/GET/DELETE /v1/graph/import-jobs), black-box against the real
 * server process: a large job to the exact record, SIGKILL mid-run and resume without a
 * duplicate or a gap, cooperative cancellation, idempotent submission, broken uploads,
 * bad lines under strict and non-strict, and flat server memory under a large upload.
 *
 * Records are built so that a double commit is visible: every edge is asserted by two
 * consecutive records with different evidence, so re-running any group re-asserts an edge
 * whose last assertion differs, which the server records as a new edge event (unchanged
 * re-assertions are deduplicated and would hide it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStackd, selectRows, removeDir, tempDataDir, type Stackd } from './helpers/server.js';
import { assertError, assertMeta } from './helpers/http.js';

const R = 'https://littlebigbrain.com/r/';
const E = 'https://littlebigbrain.com/e/';

interface Progress {
  upload_bytes: number;
  bytes_processed: number;
  lines_read: number;
  triplets: number;
  properties: number;
  observations: number;
  groups_committed: number;
  error_count: number;
  errors: { line: number; message: string }[];
  committed_commit_seq: number | null;
  stage?: string;
}

interface JobStatus {
  job_id: string;
  state: 'queued' | 'running' | 'cancellation_requested' | 'cancelled' | 'succeeded' | 'failed';
  progress: Progress;
  committed_commit_seq: number | null;
  failure: { code: string; message: string; retryable: boolean; stage: string; attempts: number; diagnostic_id: string } | null;
  publication_job: { job_id: string; disposition: string; status: string; due_seq: number } | null;
  enqueued_at_micros: number;
  updated_at_micros: number;
}

interface Accepted {
  job_id: string;
  state: string;
  idempotent_replay: boolean;
  upload_bytes: number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Record i: edge number i >> 1 (two consecutive records per edge), evidence unique to the record. */
function pairLine(tag: string, i: number): string {
  const e = i >> 1;
  return JSON.stringify({
    source: { type: 'Person', name: `${tag}-s${e}` },
    relation: 'knows',
    target: { type: 'Person', name: `${tag}-t${e % 997}` },
    confidence: i % 2 ? 0.75 : 0.5,
    evidence: { text: `${tag} record ${i}` },
  });
}

/** Record i: its own edge. */
function edgeLine(tag: string, i: number): string {
  return JSON.stringify({
    source: { type: 'Person', name: `${tag}-s${i}` },
    relation: 'knows',
    target: { type: 'Person', name: `${tag}-t${i % 997}` },
    evidence: { text: `${tag} record ${i}` },
  });
}

function bodyOf(lines: string[]): string {
  return lines.join('\n') + '\n';
}

/** A body streamed from a generator in ~64 KiB chunks: never held whole in the test either. */
function streamLines(n: number, line: (i: number) => string): ReadableStream<Uint8Array> {
  function* gen() {
    let buf: string[] = [];
    let size = 0;
    for (let i = 0; i < n; i++) {
      const l = line(i) + '\n';
      buf.push(l);
      size += l.length;
      if (size >= 65536) {
        yield Buffer.from(buf.join(''));
        buf = [];
        size = 0;
      }
    }
    if (buf.length) yield Buffer.from(buf.join(''));
  }
  return Readable.toWeb(Readable.from(gen())) as ReadableStream<Uint8Array>;
}

async function submit(
  s: Stackd, body: BodyInit | ReadableStream<Uint8Array> | null, opts: { key?: string | null; query?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-ndjson' };
  if (opts.key !== null) headers['idempotency-key'] = opts.key ?? 'key-' + Math.random().toString(36).slice(2);
  return s.fetch('/v1/graph/import-jobs' + (opts.query ? '?' + opts.query : ''), {
    method: 'POST', headers, body, duplex: 'half',
  } as RequestInit);
}

async function submitOk(s: Stackd, body: BodyInit | ReadableStream<Uint8Array>, opts: { key?: string; query?: string } = {}): Promise<Accepted> {
  const res = await submit(s, body, opts);
  const text = await res.text();
  assert.equal(res.status, 202, `submission accepted: ${text}`);
  assertMeta(res);
  const a = JSON.parse(text) as Accepted;
  assert.match(a.job_id, /\S/);
  assert.equal(a.idempotent_replay, false);
  assert.ok(['queued', 'running'].includes(a.state), `fresh job state ${a.state}`);
  return a;
}

async function getJob(s: Stackd, id: string): Promise<JobStatus> {
  const res = await s.fetch('/v1/graph/import-jobs?job_id=' + encodeURIComponent(id));
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text) as JobStatus;
}

/** Polls until the job is terminal (or `until` holds). */
async function waitJob(s: Stackd, id: string, until: (j: JobStatus) => boolean = (j) => TERMINAL.has(j.state), timeoutMs = 120_000, everyMs = 100): Promise<JobStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const j = await getJob(s, id);
    if (until(j)) return j;
    if (TERMINAL.has(j.state)) assert.fail(`job ended ${j.state} before the awaited condition: ${JSON.stringify(j)}`);
    if (Date.now() > deadline) assert.fail(`job ${id} did not reach the condition in ${timeoutMs} ms: ${JSON.stringify(j)}`);
    await sleep(everyMs);
  }
}

async function count(s: Stackd, where: string): Promise<number> {
  const rows = await selectRows(s, `SELECT (COUNT(*) AS ?n) WHERE { ${where} }`);
  return Number(rows[0]!.n!.value);
}

/** Distinct current `knows` edges whose source label starts with `${tag}-`. */
async function knowsEdges(s: Stackd, tag: string): Promise<number> {
  return count(s, `?s <${R}knows> ?o . ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l FILTER(STRSTARTS(?l, "${tag}-"))`);
}

async function hasEdge(s: Stackd, tag: string, e: number): Promise<boolean> {
  return (await count(s, `?s <${R}knows> ?o . ?s <http://www.w3.org/2000/01/rdf-schema#label> "${tag}-s${e}"`)) === 1;
}

async function summary(s: Stackd): Promise<{ observation_count: number; edge_event_count: number; current_edge_count: number }> {
  const res = await s.fetch('/v1/graph/summary');
  assert.equal(res.status, 200);
  return (await res.json()) as { observation_count: number; edge_event_count: number; current_edge_count: number };
}

async function headSeq(s: Stackd): Promise<number> {
  const res = await s.fetch('/v1/status');
  assert.equal(res.status, 200);
  return ((await res.json()) as { head_seq: number }).head_seq;
}

function spoolFiles(dataDir: string): string[] {
  const dir = join(dataDir, 'spool');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Spool files are removed just after the terminal state is written: allow a moment. */
async function spoolEmpty(dataDir: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (spoolFiles(dataDir).length > 0 && Date.now() < deadline) await sleep(50);
  assert.deepEqual(spoolFiles(dataDir), [], 'the spool directory is empty');
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

// ---------------------------------------------------------------------------------------

test('a 200k-record job commits exactly its records, reports progress and publication, and empties the spool', async () => {
  const N = 200_000;
  const BATCH = 10_000;
  const s = await startStackd();
  try {
    const t0 = performance.now();
    const a = await submitOk(s, streamLines(N, (i) => edgeLine('big', i)), { query: `batch=${BATCH}` });
    const uploadMs = performance.now() - t0;
    assert.ok(a.upload_bytes > 20_000_000, `upload_bytes ${a.upload_bytes}`);
    const j = await waitJob(s, a.job_id, undefined, 240_000, 250);
    const ms = performance.now() - t0;
    assert.equal(j.state, 'succeeded', JSON.stringify(j));
    assert.equal(j.failure, null);
    const p = j.progress;
    assert.equal(p.upload_bytes, a.upload_bytes);
    assert.equal(p.bytes_processed, a.upload_bytes);
    assert.equal(p.lines_read, N);
    assert.equal(p.triplets, N);
    assert.equal(p.properties, 0);
    assert.equal(p.observations, N);
    assert.equal(p.groups_committed, N / BATCH);
    assert.equal(p.error_count, 0);
    assert.deepEqual(p.errors, []);
    const head = await headSeq(s);
    assert.equal(head, N / BATCH, 'one commit per group on a fresh server');
    assert.equal(j.committed_commit_seq, head);
    assert.equal(p.committed_commit_seq, head);
    assert.ok(j.publication_job, 'publication_job set');
    assert.equal(j.publication_job.due_seq, head);
    assert.equal(typeof j.publication_job.job_id, 'string');
    assert.ok(j.updated_at_micros >= j.enqueued_at_micros);

    assert.equal(await count(s, `?s <${R}knows> ?o`), N, 'every record committed, as a distinct edge');
    assert.equal(await knowsEdges(s, 'big'), N);
    assert.ok(await hasEdge(s, 'big', 0));
    assert.ok(await hasEdge(s, 'big', N - 1));
    const sum = await summary(s);
    assert.equal(sum.edge_event_count, N, 'one assertion per record');
    assert.equal(sum.observation_count, N);
    await spoolEmpty(s.dataDir);
    console.log(`# 200k-record job: upload ${Math.round(uploadMs)} ms, done in ${Math.round(ms)} ms, ${Math.round(N / (ms / 1000))} records/s`);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('a job SIGKILLed mid-run resumes after restart: no record twice, none missing', async () => {
  const N = 40_000;
  const BATCH = 2000;
  const GROUPS = N / BATCH;
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    const a = await submitOk(s, bodyOf(Array.from({ length: N }, (_, i) => pairLine('kill', i))), { query: `batch=${BATCH}`, key: 'kill-job' });
    const mid = await waitJob(s, a.job_id, (j) => j.progress.groups_committed >= 2, 60_000, 20);
    assert.ok(mid.progress.groups_committed < GROUPS, `killed mid-run (at group ${mid.progress.groups_committed} of ${GROUPS})`);
    await s.kill();
    assert.equal(spoolFiles(dataDir).length, 1, 'the spool outlives the crash');

    s = await startStackd({ dataDir });
    try {
      const before = await getJob(s, a.job_id);
      // (The writer resumes the job as soon as it opens, so it may be further along, or done, by now.)
      assert.ok(before.progress.groups_committed >= mid.progress.groups_committed, 'committed groups survive the crash');
      const j = await waitJob(s, a.job_id);
      assert.equal(j.state, 'succeeded', JSON.stringify(j));
      assert.equal(j.progress.lines_read, N);
      assert.equal(j.progress.triplets, N);
      assert.equal(j.progress.observations, N);
      assert.equal(j.progress.groups_committed, GROUPS);
      assert.equal(j.progress.bytes_processed, j.progress.upload_bytes);
      const head = await headSeq(s);
      assert.equal(head, GROUPS, 'exactly one commit per group, none repeated');
      assert.equal(j.committed_commit_seq, head);
      assert.ok(j.publication_job);

      assert.equal(await knowsEdges(s, 'kill'), N / 2, 'no edge missing');
      const sum = await summary(s);
      assert.equal(sum.edge_event_count, N, 'one assertion per record: none committed twice, none skipped');
      assert.equal(sum.observation_count, N);
      await spoolEmpty(dataDir);

      // The same submission after the restart is the same job.
      const again = await submit(s, bodyOf(Array.from({ length: N }, (_, i) => pairLine('kill', i))), { query: `batch=${BATCH}`, key: 'kill-job' });
      assert.equal(again.status, 200);
      const body = (await again.json()) as Accepted;
      assert.equal(body.job_id, a.job_id);
      assert.equal(body.idempotent_replay, true);
      assert.equal(body.state, 'succeeded');
      await spoolEmpty(dataDir);
      assert.equal(await headSeq(s), GROUPS);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('a job killed right after it was accepted runs after restart', async () => {
  const N = 4000;
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    const a = await submitOk(s, bodyOf(Array.from({ length: N }, (_, i) => pairLine('early', i))), { query: 'batch=1000' });
    await s.kill();
    s = await startStackd({ dataDir });
    try {
      const j = await waitJob(s, a.job_id);
      assert.equal(j.state, 'succeeded', JSON.stringify(j));
      assert.equal(j.progress.lines_read, N);
      assert.equal(await knowsEdges(s, 'early'), N / 2);
      assert.equal((await summary(s)).edge_event_count, N);
      await spoolEmpty(dataDir);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('SIGTERM mid-run stops promptly; the job resumes after restart without a duplicate', async () => {
  const N = 40_000;
  const BATCH = 2000;
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    const a = await submitOk(s, bodyOf(Array.from({ length: N }, (_, i) => pairLine('term', i))), { query: `batch=${BATCH}` });
    await waitJob(s, a.job_id, (j) => j.progress.groups_committed >= 1, 60_000, 20);
    const t0 = performance.now();
    await s.stop();
    const stopMs = performance.now() - t0;
    assert.ok(stopMs < 5000, `a graceful stop does not wait for the whole job (took ${Math.round(stopMs)} ms)`);
    assert.equal(s.proc.exitCode, 0);
    s = await startStackd({ dataDir });
    try {
      const j = await waitJob(s, a.job_id);
      assert.equal(j.state, 'succeeded', JSON.stringify(j));
      assert.equal(j.progress.groups_committed, N / BATCH);
      assert.equal(await headSeq(s), N / BATCH);
      assert.equal(await knowsEdges(s, 'term'), N / 2);
      assert.equal((await summary(s)).edge_event_count, N);
      await spoolEmpty(dataDir);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('cancel mid-run: cancellation_requested, then cancelled; committed groups stay and are reported, nothing after', async () => {
  const N = 40_000;
  const BATCH = 2000;
  const s = await startStackd();
  try {
    const a = await submitOk(s, bodyOf(Array.from({ length: N }, (_, i) => edgeLine('cancel', i))), { query: `batch=${BATCH}` });
    await waitJob(s, a.job_id, (j) => j.progress.groups_committed >= 1, 60_000, 20);
    const del = await s.fetch('/v1/graph/import-jobs?job_id=' + a.job_id, { method: 'DELETE' });
    assert.equal(del.status, 200);
    assertMeta(del);
    const cancel = (await del.json()) as { job_id: string; state: string };
    assert.equal(cancel.job_id, a.job_id);
    assert.equal(cancel.state, 'cancellation_requested');

    const j = await waitJob(s, a.job_id);
    assert.equal(j.state, 'cancelled', JSON.stringify(j));
    assert.equal(j.failure, null);
    const g = j.progress.groups_committed;
    assert.ok(g >= 1 && g < N / BATCH, `cancelled mid-run after ${g} groups`);
    assert.equal(j.progress.lines_read, g * BATCH);
    assert.equal(j.progress.triplets, g * BATCH);
    const head = await headSeq(s);
    assert.equal(head, g, 'one commit per committed group');
    assert.equal(j.committed_commit_seq, head, 'the last committed group is reported');
    assert.equal(await knowsEdges(s, 'cancel'), g * BATCH, 'what was committed stays committed');
    assert.ok(await hasEdge(s, 'cancel', g * BATCH - 1));
    assert.equal(await hasEdge(s, 'cancel', g * BATCH), false, 'nothing after the last committed group');
    await spoolEmpty(s.dataDir);

    await sleep(500);
    assert.equal(await headSeq(s), head, 'nothing is committed after the cancellation');
    const later = await getJob(s, a.job_id);
    assert.equal(later.state, 'cancelled');
    assert.equal(later.progress.groups_committed, g);

    // Cancelling a terminal job is harmless and says so.
    const again = await s.fetch('/v1/graph/import-jobs?job_id=' + a.job_id, { method: 'DELETE' });
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), { job_id: a.job_id, state: 'cancelled' });
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('a queued job cancelled before it starts commits nothing', async () => {
  const s = await startStackd();
  try {
    // A first job keeps the runner busy so the second one is still queued when cancelled.
    const first = await submitOk(s, bodyOf(Array.from({ length: 10_000 }, (_, i) => edgeLine('busy', i))), { query: 'batch=2000' });
    const second = await submitOk(s, bodyOf(Array.from({ length: 100 }, (_, i) => edgeLine('queued', i))));
    const del = await s.fetch('/v1/graph/import-jobs?job_id=' + second.job_id, { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.equal(((await del.json()) as { state: string }).state, 'cancellation_requested');
    const j = await waitJob(s, second.job_id);
    assert.equal(j.state, 'cancelled');
    assert.equal(j.progress.groups_committed, 0);
    assert.equal(j.committed_commit_seq, null);
    assert.equal(await knowsEdges(s, 'queued'), 0);
    const f = await waitJob(s, first.job_id);
    assert.equal(f.state, 'succeeded');
    assert.equal(await knowsEdges(s, 'busy'), 10_000);
    await spoolEmpty(s.dataDir);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('idempotent submission: same key and body is the same job; other content is 409; key and body are required', async () => {
  const s = await startStackd();
  try {
    const lines = Array.from({ length: 3000 }, (_, i) => edgeLine('idem', i));
    const body = bodyOf(lines);
    const a = await submitOk(s, body, { key: 'idem-1', query: 'batch=1000' });
    assert.equal(a.upload_bytes, Buffer.byteLength(body));

    // Replayed while it may still be running, and after it finished: the same job, no second one.
    const r1 = await submit(s, body, { key: 'idem-1', query: 'batch=1000' });
    assert.ok(r1.status === 200 || r1.status === 202, `replay status ${r1.status}`);
    const b1 = (await r1.json()) as Accepted;
    assert.equal(b1.job_id, a.job_id);
    assert.equal(b1.idempotent_replay, true);
    assert.equal(b1.upload_bytes, a.upload_bytes);
    const j = await waitJob(s, a.job_id);
    assert.equal(j.state, 'succeeded');
    const head = await headSeq(s);
    const r2 = await submit(s, streamLines(lines.length, (i) => lines[i]!), { key: 'idem-1', query: 'batch=1000' });
    const b2 = (await r2.json()) as Accepted;
    assert.equal(b2.job_id, a.job_id, 'a streamed replay of the same bytes is the same job');
    assert.equal(b2.idempotent_replay, true);
    assert.equal(b2.state, 'succeeded');
    await sleep(300);
    assert.equal(await headSeq(s), head, 'a replay commits nothing');
    assert.equal(await knowsEdges(s, 'idem'), 3000);
    assert.equal((await summary(s)).edge_event_count, 3000);
    await spoolEmpty(s.dataDir);

    // The same records under a new key: a new job that changes nothing; it reports the head.
    const dup = await submitOk(s, body, { key: 'idem-2', query: 'batch=1000' });
    assert.notEqual(dup.job_id, a.job_id);
    const dj = await waitJob(s, dup.job_id);
    assert.equal(dj.state, 'succeeded');
    assert.equal(dj.progress.triplets, 3000);
    assert.equal(dj.progress.observations, 0, 'no observation was recorded');
    assert.equal(await headSeq(s), head, 'unchanged re-assertions commit nothing');
    assert.equal(dj.committed_commit_seq, head);
    assert.equal(dj.publication_job?.due_seq, head);

    // Same key, other content or other options: 409, and no job or spool file is left.
    await assertError(await submit(s, bodyOf(lines.slice(1)), { key: 'idem-1', query: 'batch=1000' }), 409, 'idempotency_key_reused');
    await assertError(await submit(s, body, { key: 'idem-1', query: 'batch=1000&strict=true' }), 409, 'idempotency_key_reused');
    assert.deepEqual(spoolFiles(s.dataDir), []);

    // No Idempotency-Key: 400, nothing spooled.
    const noKey = await assertError(await submit(s, body, { key: null }), 400, 'idempotency_key_required');
    assert.equal(noKey.param, 'Idempotency-Key');
    // Empty body: 400; the key stays free for a real upload.
    await assertError(await submit(s, '', { key: 'idem-empty' }), 400, 'empty_body');
    await assertError(await submit(s, null, { key: 'idem-empty' }), 400, 'empty_body');
    assert.deepEqual(spoolFiles(s.dataDir), []);
    const fresh = await submitOk(s, bodyOf([edgeLine('idem-late', 0)]), { key: 'idem-empty' });
    assert.notEqual(fresh.job_id, a.job_id);
    assert.equal((await waitJob(s, fresh.job_id)).state, 'succeeded');

    // Bad options are refused before the upload.
    await assertError(await submit(s, body, { query: 'batch=0' }), 400, 'invalid_parameter');
    await assertError(await submit(s, body, { query: 'batch=10001' }), 400, 'invalid_parameter');
    await assertError(await submit(s, body, { query: 'strict=maybe' }), 400, 'invalid_parameter');
    await assertError(await submit(s, body, { query: 'nope=1' }), 400, 'unknown_parameter');
    await assertError(await submit(s, body, { query: 'graph=other' }), 404, 'graph_not_found');
    assert.deepEqual(spoolFiles(s.dataDir), []);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

/** Sends half of `full` (chunked, or with a Content-Length for all of it), waits until the server spools it, then cuts the connection. */
function breakOffUpload(s: Stackd, key: string, full: Buffer, mode: 'chunked' | 'content-length'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${s.token}`, 'content-type': 'application/x-ndjson', 'idempotency-key': key };
    if (mode === 'chunked') headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = String(full.length);
    const req = request({ host: '127.0.0.1', port: s.port, method: 'POST', path: '/v1/graph/import-jobs?batch=2000', headers });
    req.on('error', () => undefined);
    req.on('response', (res) => reject(new Error(`the server answered ${res.statusCode} to a body that never ended`)));
    const half = full.subarray(0, full.length >> 1);
    for (let off = 0; off < half.length; off += 65536) req.write(half.subarray(off, off + 65536));
    const deadline = Date.now() + 10_000;
    const poll = () => {
      if (spoolFiles(s.dataDir).some((f) => f.startsWith('upload-'))) {
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 200);
      } else if (Date.now() > deadline) reject(new Error('the upload never reached the spool directory'));
      else setTimeout(poll, 20);
    };
    poll();
  });
}

test('an upload that breaks off mid-stream creates no job and leaves no spool file', async () => {
  const s = await startStackd();
  try {
    const lines = Array.from({ length: 10_000 }, (_, i) => edgeLine('broken', i));
    const full = Buffer.from(bodyOf(lines));
    for (const mode of ['chunked', 'content-length'] as const) {
      await breakOffUpload(s, `broken-${mode}`, full, mode);
      await spoolEmpty(s.dataDir);
    }
    await sleep(300);
    assert.equal(await headSeq(s), 0, 'nothing was committed');

    // The key names no job: the full upload with the same key is a fresh job.
    const a = await submitOk(s, full, { key: 'broken-chunked', query: 'batch=2000' });
    const j = await waitJob(s, a.job_id);
    assert.equal(j.state, 'succeeded');
    assert.equal(j.progress.lines_read, lines.length);
    assert.equal(await knowsEdges(s, 'broken'), lines.length);
    assert.equal(await headSeq(s), lines.length / 2000, 'only the complete upload became a job');
    await spoolEmpty(s.dataDir);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('SIGKILL during an upload: after restart no partial spool file and no job; the key is free', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    // An endless body: the server is killed while it is still arriving.
    let i = 0;
    const endless = new Readable({
      read() {
        setTimeout(() => this.push(Buffer.from(edgeLine('upkill', i++) + '\n')), 1);
      },
    });
    const pending = submit(s, Readable.toWeb(endless) as ReadableStream<Uint8Array>, { key: 'upkill' }).then(
      (r) => r.status,
      () => 'connection lost',
    );
    const deadline = Date.now() + 10_000;
    while (!spoolFiles(dataDir).some((f) => f.startsWith('upload-')) && Date.now() < deadline) await sleep(20);
    assert.ok(spoolFiles(dataDir).length > 0, 'the upload was being spooled');
    await s.kill();
    assert.equal(await pending, 'connection lost');
    endless.destroy();

    s = await startStackd({ dataDir });
    try {
      assert.deepEqual(spoolFiles(dataDir), [], 'the partial upload is gone after restart');
      assert.equal(await headSeq(s), 0);
      const a = await submitOk(s, bodyOf([edgeLine('upkill', 0), edgeLine('upkill', 1)]), { key: 'upkill' });
      const j = await waitJob(s, a.job_id);
      assert.equal(j.state, 'succeeded');
      assert.equal(await knowsEdges(s, 'upkill'), 2);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('bad lines, strict=false: the job succeeds, skipping and counting them with their line numbers', async () => {
  const s = await startStackd();
  try {
    const good = (i: number) => edgeLine('lax', i);
    const parts: (string | Buffer)[] = [
      good(0), // 1
      'not json', // 2
      good(1), // 3
      '', // 4: blank, skipped silently
      JSON.stringify({ relation: 'knows', target: { type: 'Person', name: 'x' } }), // 5: no source
      good(2), // 6
      Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), // 7: not UTF-8
      '[1,2]', // 8: not an object
      good(3), // 9
    ];
    const body = Buffer.concat(parts.map((p) => Buffer.concat([typeof p === 'string' ? Buffer.from(p) : p, Buffer.from('\n')])));
    const a = await submitOk(s, body, { query: 'batch=2' });
    const j = await waitJob(s, a.job_id);
    assert.equal(j.state, 'succeeded', JSON.stringify(j));
    assert.equal(j.failure, null);
    assert.equal(j.progress.lines_read, 9);
    assert.equal(j.progress.triplets, 4);
    assert.equal(j.progress.error_count, 4);
    assert.deepEqual(j.progress.errors.map((e) => e.line), [2, 5, 7, 8]);
    for (const e of j.progress.errors) assert.ok(e.message.length > 0);
    assert.match(j.progress.errors[0]!.message, /JSON/);
    assert.match(j.progress.errors[2]!.message, /UTF-8/);
    assert.equal(await knowsEdges(s, 'lax'), 4);
    await spoolEmpty(s.dataDir);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('many bad lines in one group are all counted', async () => {
  const s = await startStackd();
  try {
    const lines = Array.from({ length: 500 }, (_, i) => (i % 2 ? `garbage ${i}` : edgeLine('many', i)));
    const a = await submitOk(s, bodyOf(lines));
    const j = await waitJob(s, a.job_id);
    assert.equal(j.state, 'succeeded');
    assert.equal(j.progress.triplets, 250);
    assert.equal(j.progress.error_count, 250, 'error_count counts every bad line, not just the ones listed');
    assert.ok(j.progress.errors.length > 0 && j.progress.errors.length <= 250);
    assert.equal(j.progress.errors[0]!.line, 2);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('a line that cannot become RDF (unpaired surrogate) is a bad line, not a stuck job', async () => {
  const s = await startStackd();
  try {
    const lines = [
      edgeLine('sur', 0),
      '{"source": {"type": "Person", "name": "a"}, "relation": "kn\\ud800ows", "target": {"type": "Person", "name": "b"}}',
      '{"type": "Person", "name": "x\\udc00", "properties": {}}',
      edgeLine('sur', 1),
      // A paired surrogate escape is fine.
      '{"source": {"type": "Person", "name": "sur-emoji \\ud83d\\ude00"}, "relation": "knows", "target": {"type": "Person", "name": "b"}}',
    ];
    const a = await submitOk(s, bodyOf(lines));
    const j = await waitJob(s, a.job_id, undefined, 20_000);
    assert.equal(j.state, 'succeeded', JSON.stringify(j));
    assert.deepEqual(j.progress.errors.map((e) => e.line), [2, 3]);
    assert.match(j.progress.errors[0]!.message, /surrogate/);
    assert.equal(j.progress.triplets, 3);
    assert.equal(await knowsEdges(s, 'sur'), 3);
    assert.equal(await hasEdge(s, 'sur', 1), true);
    assert.equal((await selectRows(s, 'SELECT ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l FILTER(STRSTARTS(?l, "sur-emoji")) }'))[0]!.l!.value, 'sur-emoji \u{1F600}');

    const strict = await submitOk(s, bodyOf(lines), { query: 'strict=true' });
    const f = await waitJob(s, strict.job_id, undefined, 20_000);
    assert.equal(f.state, 'failed');
    assert.match(f.failure!.message, /line 2: .*surrogate/);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('bad line, strict=true: the job fails naming the line and the reason; earlier groups stay committed', async () => {
  const s = await startStackd();
  try {
    const lines = Array.from({ length: 20 }, (_, i) => edgeLine('strict', i));
    lines.splice(12, 0, '{"source": {"type": "Person", "name": "a"}, "relation": "knows", "target": }'); // line 13
    const a = await submitOk(s, bodyOf(lines), { query: 'batch=5&strict=true' });
    const j = await waitJob(s, a.job_id);
    assert.equal(j.state, 'failed', JSON.stringify(j));
    assert.ok(j.failure);
    assert.match(j.failure.message, /line 13\b/);
    assert.match(j.failure.message, /JSON/);
    assert.equal(typeof j.failure.code, 'string');
    assert.equal(j.failure.retryable, false);
    assert.equal(typeof j.failure.diagnostic_id, 'string');
    assert.ok(j.failure.attempts >= 1);
    assert.equal(j.progress.groups_committed, 2, 'the groups before the bad line committed');
    assert.equal(j.progress.error_count, 1);
    assert.deepEqual(j.progress.errors.map((e) => e.line), [13]);
    const head = await headSeq(s);
    assert.equal(head, 2);
    assert.equal(j.committed_commit_seq, head);
    assert.equal(j.publication_job, null);
    assert.equal(await knowsEdges(s, 'strict'), 10, 'earlier groups stay committed, nothing of the failing group');
    await spoolEmpty(s.dataDir);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('server memory stays flat while a 300 MB body streams in', async () => {
  const s = await startStackd();
  try {
    const pid = s.proc.pid!;
    const TARGET = 300 * 1024 * 1024;
    // A ~300 MB body generated on the fly, 256 KiB at a time.
    const filler = 'x'.repeat(120);
    let sent = 0;
    let i = 0;
    const source = new Readable({
      read() {
        if (sent >= TARGET) {
          this.push(null);
          return;
        }
        const parts: string[] = [];
        let size = 0;
        while (size < 262_144) {
          const l = JSON.stringify({ source: { type: 'Doc', name: `mem-s${i}` }, relation: 'mentions', target: { type: 'Doc', name: `mem-t${i % 1000}` }, evidence: { text: filler } }) + '\n';
          parts.push(l);
          size += l.length;
          i++;
        }
        sent += size;
        this.push(Buffer.from(parts.join('')));
      },
    });
    await sleep(500);
    const baseline = rssKb(pid);
    let peak = baseline;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssKb(pid));
      } catch {
        /* process gone */
      }
    }, 50);
    const t0 = performance.now();
    let a: Accepted;
    try {
      a = await submitOk(s, Readable.toWeb(source) as ReadableStream<Uint8Array>);
    } finally {
      clearInterval(sampler);
    }
    const ms = performance.now() - t0;
    assert.equal(a.upload_bytes, sent);
    const growthMb = (peak - baseline) / 1024;
    console.log(`# 300 MB upload: ${Math.round(sent / 1048576)} MiB in ${Math.round(ms)} ms; server RSS baseline ${Math.round(baseline / 1024)} MiB, peak ${Math.round(peak / 1024)} MiB (+${growthMb.toFixed(1)} MiB)`);
    assert.ok(growthMb < 150, `server RSS grew ${growthMb.toFixed(1)} MiB during a ${Math.round(sent / 1048576)} MiB upload`);

    const del = await s.fetch('/v1/graph/import-jobs?job_id=' + a.job_id, { method: 'DELETE' });
    assert.equal(del.status, 200);
    const j = await waitJob(s, a.job_id, undefined, 60_000);
    assert.equal(j.state, 'cancelled');
    assert.equal(j.progress.upload_bytes, sent);
    await spoolEmpty(s.dataDir);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('/version lists durable_import_jobs_v1; unknown or missing job ids are typed errors', async () => {
  const s = await startStackd();
  try {
    const v = (await (await fetch(s.url + '/version')).json()) as { capabilities: string[] };
    assert.ok(v.capabilities.includes('durable_import_jobs_v1'));

    await assertError(await s.fetch('/v1/graph/import-jobs?job_id=ij_nope'), 404, 'job_not_found');
    await assertError(await s.fetch('/v1/graph/import-jobs?job_id=ij_nope', { method: 'DELETE' }), 404, 'job_not_found');
    await assertError(await s.fetch('/v1/graph/import-jobs'), 400, 'missing_parameter');
    await assertError(await s.fetch('/v1/graph/import-jobs', { method: 'DELETE' }), 400, 'missing_parameter');
    await assertError(await s.fetch('/v1/graph/import-jobs?job_id=x', { headers: { authorization: 'Bearer wrong' } }), 401, 'invalid_token', 'authentication_error');
    await assertError(await s.fetch('/v1/graph/import-jobs?job_id=x&branch=dev'), 404, 'branch_not_found');
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('entity lines set properties; finished jobs are answered after a restart', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir });
    const lines = [
      JSON.stringify({ type: 'Person', name: 'Ada', properties: { born: 1815, field: 'mathematics' } }),
      JSON.stringify({ source: { type: 'Person', name: 'Ada' }, relation: 'KNOWS', target: { type: 'Person', name: 'Charles' } }),
    ];
    const a = await submitOk(s, bodyOf(lines), { query: 'observed_at=2020-01-01T00:00:00Z' });
    const j = await waitJob(s, a.job_id);
    assert.equal(j.state, 'succeeded');
    assert.equal(j.progress.properties, 1);
    assert.equal(j.progress.triplets, 1);
    const rows = await selectRows(s, `SELECT ?o WHERE { ?a <http://www.w3.org/2000/01/rdf-schema#label> "Ada" . ?a <${R}knows> ?b . ?b <http://www.w3.org/2000/01/rdf-schema#label> ?o }`);
    assert.deepEqual(rows.map((r) => r.o!.value), ['Charles']);
    assert.ok(rows.length === 1 && (await count(s, `?a <https://littlebigbrain.com/p/born> ?v FILTER(STRSTARTS(STR(?a), "${E}"))`)) === 1);
    await s.stop();
    s = await startStackd({ dataDir });
    try {
      const again = await getJob(s, a.job_id);
      assert.equal(again.state, 'succeeded');
      assert.deepEqual(again.progress, j.progress);
      assert.equal(again.committed_commit_seq, j.committed_commit_seq);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('finished jobs are forgotten after job_retention_days (0: as soon as they end)', async () => {
  const s = await startStackd({ env: { STACKD_JOB_RETENTION_DAYS: '0' } });
  try {
    const a = await submitOk(s, bodyOf([edgeLine('ret', 0)]), { key: 'ret-1' });
    const deadline = Date.now() + 10_000;
    let res: Response;
    for (;;) {
      res = await s.fetch('/v1/graph/import-jobs?job_id=' + a.job_id);
      if (res.status === 404 || Date.now() > deadline) break;
      await res.body?.cancel();
      await sleep(50);
    }
    await assertError(res, 404, 'job_not_found');
    assert.equal(await knowsEdges(s, 'ret'), 1, 'the data stays');
    // Its key is free again.
    const b = await submitOk(s, bodyOf([edgeLine('ret', 1)]), { key: 'ret-1' });
    assert.notEqual(b.job_id, a.job_id);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});
