import { Worker } from 'node:worker_threads';

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

  constructor(dataDir: string) {
    this.worker = new Worker(new URL('./checkpointer-worker.js', import.meta.url), { workerData: { dataDir } });
    this.worker.on('message', (m: { id: number; done: boolean }) => {
      const then = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      then?.(m.done);
    });
  }

  /** Checkpoints now, or right after the one running; `then` learns whether the WAL was fully folded. */
  request(then: Then = () => undefined) {
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
    const exited = new Promise((r) => this.worker.once('exit', r));
    this.worker.postMessage('close');
    await exited;
  }
}
