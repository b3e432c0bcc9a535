import { Worker, type MessagePort } from 'node:worker_threads';
import { ApiError } from '../http/errors.js';
import type { RdfImportParams, WriterEvent, WriterReplies, WriterReply } from './writer-protocol.js';

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** Main-thread handle on the writer worker: request/response over postMessage. */
export class WriterClient {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: Error | null = null;

  private closing = false;

  constructor(
    dataDir: string,
    iriBase: string,
    jobRetentionMs: number,
    onEvent: (e: WriterEvent) => void,
    /** Called if the writer dies while the server is running (not at close). */
    onDeath: (e: Error) => void = () => undefined,
  ) {
    this.worker = new Worker(new URL('./writer-worker.js', import.meta.url), { workerData: { dataDir, iriBase, jobRetentionMs } });
    this.worker.on('message', (m: WriterReply | WriterReplies | WriterEvent) => {
      if ('event' in m) return onEvent(m);
      if ('replies' in m) for (const r of m.replies) this.settle(r);
      else this.settle(m);
    });
    const fail = (e: Error) => {
      this.dead = e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => {
      const e = new Error(`writer exited with code ${code}`);
      fail(e);
      if (!this.closing) onDeath(e);
    });
  }

  private settle(m: WriterReply) {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.ok) p.resolve(m.result);
    else {
      const f = m.error;
      p.reject(new ApiError(f.status, f.type, f.code, f.message, { param: f.param ?? null, retryable: f.retryable ?? f.status >= 500 }));
    }
  }

  private call<T>(msg: Record<string, unknown>, transfer: (ArrayBuffer | MessagePort)[] = []): Promise<T> {
    if (this.dead) return Promise.reject(new ApiError(503, 'api_error', 'writer_unavailable', `the writer is not running: ${this.dead.message}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...msg, id }, transfer);
    });
  }

  attach(replicaId: number, port: MessagePort) {
    return this.call<{ seq: number; size: number; ms: number }>({ op: 'attach', replicaId, port }, [port]);
  }

  importRdf(body: Uint8Array, params: RdfImportParams, idempotencyKey: string | null) {
    // Hand the bytes over without copying.
    const buf =
      body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
        ? (body.buffer as ArrayBuffer)
        : (body.slice().buffer as ArrayBuffer);
    return this.call<{ status: number; body: Record<string, unknown>; replayed: boolean }>(
      { op: 'importRdf', body: buf, params, idempotencyKey },
      [buf],
    );
  }

  /** A graph write (commit, retract, import, reload, delete); bodies are transferred, not copied. */
  write<T = { status: number; body: Record<string, unknown> }>(msg: Record<string, unknown>, body?: Uint8Array): Promise<T> {
    if (!body) return this.call<T>(msg);
    const buf = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? (body.buffer as ArrayBuffer) : (body.slice().buffer as ArrayBuffer);
    return this.call<T>({ ...msg, body: buf }, [buf]);
  }

  async close() {
    this.closing = true;
    try {
      await this.call({ op: 'close' });
    } catch {
      /* already gone */
    }
    await this.worker.terminate();
  }
}
