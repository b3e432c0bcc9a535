/**
 * A head replica: one Oxigraph store holding the current state, in its own thread so
 * synchronous queries and loads never block the HTTP event loop. Writes arrive from the
 * writer as begin / load* / commit (or abort); queries that arrive while a write is open
 * wait until it ends, so no reader ever sees half a commit.
 */
import { parentPort, workerData, Worker, type MessagePort } from 'node:worker_threads';
import type { ReaderMessage } from './build-reader.js';
import { Store, namedNode, parse as oxParse, type Quad } from 'oxigraph';
import type { StatementPin } from './visibility.js';
import type { HeadWriteMessage, HeadWriteReply, QueryCancel, QueryProgress, QueryReply, QueryRequest } from './head-protocol.js';
import { QueryClock } from './query-clock.js';

interface Pin extends StatementPin {
  dataDir: string;
}
const { writePort, pin, clockBuffer } = workerData as { writePort?: MessagePort; pin?: Pin; clockBuffer: SharedArrayBuffer };
const clock = new QueryClock(clockBuffer);
let store = new Store();
let seq = 0;
let openSeq: number | null = null;
let failure: string | null = null;
/**
 * Set when the engine trapped (a WebAssembly RuntimeError: out of its 4 GiB linear memory,
 * or a panic). Its store can no longer be trusted or even used, so this replica answers the
 * writer's next request with a fatal failure and exits; the pool rebuilds a fresh one from
 * SQLite (the write that broke it is rolled back there).
 */
let broken: string | null = null;
const fault = process.env.STACKD_FAULT_HEAD_TRAP_ON; // test seam: trap on a load containing this text

function trapped(e: unknown): boolean {
  if (!(e instanceof WebAssembly.RuntimeError)) return false;
  broken ??= `the head store's engine stopped (${e.message}); most likely it is out of memory`;
  return true;
}

function exitSoon() {
  // After the reply above is posted; process.exit in a worker ends only this thread.
  setImmediate(() => process.exit(1));
}
/** Queries waiting their turn: behind the running one, or until an open write ends. */
const waiting: QueryRequest[] = [];
let draining = false;

const NQ = 'application/n-quads';

function loadText(text: string, bnText: string) {
  if (fault && text.includes(fault)) throw new WebAssembly.RuntimeError('unreachable (injected by STACKD_FAULT_HEAD_TRAP_ON)');
  if (text) store.load(text, { format: NQ, no_transaction: true });
  // Store.load renames blank nodes per call; parsed quads keep their labels.
  if (bnText) for (const q of oxParse(bnText, { format: NQ }) as Quad[]) store.add(q);
}

function unloadText(text: string, bnText: string) {
  for (const part of [text, bnText]) {
    if (part) for (const q of oxParse(part, { format: NQ }) as Quad[]) store.delete(q);
  }
}

/** Loads the visible statements from SQLite; a reader thread reads while this one loads. */
function build(dataDir: string, p: Pin | null = null): Promise<HeadWriteReply> {
  const t0 = performance.now();
  store = new Store();
  const pinData: StatementPin | null = p ? { seq: p.seq, validTime: p.validTime } : null;
  const reader = new Worker(new URL('./build-reader.js', import.meta.url), { workerData: { dataDir, pin: pinData } });
  return new Promise<HeadWriteReply>((resolve, reject) => {
    reader.on('message', (m: ReaderMessage) => {
      try {
        if ('chunk' in m) {
          if (m.bn) loadText('', m.chunk);
          else loadText(m.chunk, '');
          reader.postMessage(1); // credit for the next chunk
        } else if ('done' in m) {
          seq = m.seq;
          void reader.terminate();
          resolve({ op: 'built', seq, size: store.size, ms: Math.round(performance.now() - t0) });
        } else {
          void reader.terminate();
          reject(new Error(m.failed));
        }
      } catch (e) {
        void reader.terminate();
        reject(e);
      }
    });
    reader.on('error', reject);
  });
}

function runQuery(req: QueryRequest): QueryReply {
  const options: Parameters<Store['query']>[1] = { results_format: req.resultsFormat };
  if (req.baseIri) options.base_iri = req.baseIri;
  if (req.defaultGraphs || req.namedGraphs) {
    options.default_graph = (req.defaultGraphs ?? []).map((g) => namedNode(g));
    options.named_graphs = (req.namedGraphs ?? []).map((g) => namedNode(g));
  } else if (req.union) {
    options.use_default_graph_as_union = true;
  }
  try {
    const body = store.query(req.query, options);
    return { id: req.id, ok: true, body: typeof body === 'string' ? body : String(body), seq };
  } catch (e) {
    if (trapped(e)) {
      exitSoon();
      return { id: req.id, ok: false, kind: 'evaluation', message: `${broken}; the replica is being rebuilt` };
    }
    const message = (e as Error).message ?? String(e);
    // Oxigraph prefixes parse errors with their position ("error at 1:25: ...").
    const kind = /^error at \d+:\d+/.test(message) ? 'syntax' : /format/i.test(message) ? 'format' : 'evaluation';
    return { id: req.id, ok: false, kind, message };
  }
}

/**
 * Runs the waiting queries one per turn of the event loop, so a cancellation (or a write)
 * that arrived while one ran is seen before the next starts. The clock tells the pool
 * which one runs and since when: waiting is not running.
 */
function drain() {
  if (draining || broken !== null || openSeq !== null || waiting.length === 0) return;
  draining = true;
  setImmediate(() => {
    draining = false;
    if (openSeq !== null || broken !== null) return;
    runNext();
    drain();
  });
}

function runNext() {
  const req = waiting.shift();
  if (!req) return;
  clock.started(req.id);
  parentPort!.postMessage(runQuery(req));
  clock.finished(req.id);
}

if (pin) {
  // A pinned replica: built once for its pin, then read-only.
  build(pin.dataDir, pin).then(
    (ready) => parentPort!.postMessage({ ready }),
    (e) => parentPort!.postMessage({ failed: (e as Error).message }),
  );
}

/** Applies one write message; returns its reply, if it has one. */
function applyWrite(msg: HeadWriteMessage): HeadWriteReply | null {
  if (broken !== null && msg.op !== 'batch') {
    // Nothing more is applied; the next request learns why, and this thread ends.
    if (msg.op !== 'prepare' && msg.op !== 'abort' && msg.op !== 'build') return null;
    exitSoon();
    return { op: 'failed', message: broken, fatal: true };
  }
  try {
    switch (msg.op) {
      case 'build':
        // Asynchronous: the writer sends nothing else to this replica until it is built.
        build(msg.dataDir).then(
          (built) => writePort!.postMessage(built),
          (e) => writePort!.postMessage({ op: 'failed', message: (e as Error).message } satisfies HeadWriteReply),
        );
        return null;
      case 'batch': {
        let reply: HeadWriteReply | null = null;
        for (const m of msg.msgs) reply = applyWrite(m) ?? reply;
        return reply;
      }
      case 'begin':
        openSeq = msg.seq;
        failure = null;
        return null;
      case 'load':
        if (failure === null) loadText(msg.text, msg.bnText);
        return null;
      case 'unload':
        unloadText(msg.text, msg.bnText);
        return null;
      case 'clear':
        store = new Store();
        return null;
      case 'prepare':
        return failure !== null ? { op: 'failed', message: failure } : { op: 'prepared', seq: msg.seq };
      case 'commit':
        // No reply: queries that arrive after the writer's ack are held until this message
        // (the write is open until then), so the writer need not wait for it.
        seq = msg.seq;
        openSeq = null;
        return null;
      case 'abort':
        openSeq = null;
        failure = null;
        return { op: 'acked', seq }; // no store.size here: it scans the whole store
    }
  } catch (e) {
    if (trapped(e)) return applyWrite(msg); // answered as broken
    // A statement the engine refuses: remember it and fail the commit; the writer unloads.
    failure = (e as Error).message ?? String(e);
    return msg.op === 'load' ? null : { op: 'failed', message: failure };
  }
}

writePort?.on('message', (msg: HeadWriteMessage) => {
  const reply = applyWrite(msg);
  if (reply) writePort!.postMessage(reply);
  if (openSeq === null) drain();
});

parentPort!.on('message', (req: QueryRequest | QueryCancel) => {
  if (req.op === 'cancel') {
    const i = waiting.findIndex((w) => w.id === req.id);
    if (i < 0) return; // already running or answered
    waiting.splice(i, 1);
    parentPort!.postMessage({ id: req.id, progress: 'cancelled' } satisfies QueryProgress);
  } else {
    waiting.push(req);
    // Never run here: a cancel (or another query) may be queued on the port behind this
    // message, and setImmediate lets every queued message be seen before a query starts.
    drain();
  }
});
