import { Worker } from 'node:worker_threads';
import type { DB } from './db.js';

type Then = (done: boolean) => void;

/**
 * The writer's handle on the checkpointer thread. Requests made while a checkpoint runs are
 * all answered by one more run after it (which covers their commits), so a burst of writes
 * costs at most two checkpoints.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private running = false;
  private pending: Then[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, Then>();
  /** Set if the thread failed: checkpoints then run on the writer's connection, as SQLite would. */
  private failed = false;

  constructor(
    dataDir: string,
    private readonly writerDb: DB,
  ) {
    this.worker = new Worker(new URL('./checkpointer-worker.js', import.meta.url), { workerData: { dataDir } });
    this.worker.on('message', (m: { id: number; done: boolean }) => {
      const then = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      then?.(m.done);
    });
    this.worker.on('error', () => this.fail());
    this.worker.on('exit', () => this.fail());
  }

  private fail() {
    if (this.failed) return;
    this.failed = true;
    this.running = false;
    const stranded = [...this.waiting.values(), ...this.pending];
    this.waiting.clear();
    this.pending = [];
    for (const then of stranded) this.request(then);
  }

  /** Checkpoints now, or right after the one running; `then` learns whether the WAL was fully folded. */
  request(then: Then = () => undefined) {
    if (this.failed) {
      let done = false;
      try {
        if (this.writerDb.open && !this.writerDb.inTransaction) {
          const [r] = this.writerDb.pragma('wal_checkpoint(PASSIVE)') as { busy: number }[];
          done = r !== undefined && r.busy === 0;
        }
      } catch {
        /* busy: the next write's publication tries again */
      }
      then(done);
      return;
    }
    this.pending.push(then);
    if (!this.running) this.run();
  }

  private run() {
    const batch = this.pending;
    this.pending = [];
    this.running = true;
    const id = this.nextId++;
    this.waiting.set(id, (done) => {
      this.running = false;
      for (const t of batch) t(done);
      if (this.pending.length) this.run();
    });
    this.worker.postMessage({ id });
  }

  async close() {
    if (this.failed) return;
    const exited = new Promise((r) => this.worker.once('exit', r));
    this.worker.postMessage('close');
    await exited;
  }
}
