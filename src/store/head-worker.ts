/**
 * A head replica: one Oxigraph store holding the current state, in its own thread so
 * synchronous queries and loads never block the HTTP event loop. Writes arrive from the
 * writer as begin / load* / commit (or abort); queries that arrive while a write is open
 * wait until it ends, so no reader ever sees half a commit.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { Store, namedNode, parse as oxParse, type Quad } from 'oxigraph';
import Database from 'better-sqlite3';
import { dbPath } from './db.js';
import type { HeadWriteMessage, HeadWriteReply, QueryReply, QueryRequest } from './head-protocol.js';

const writePort: MessagePort = (workerData as { writePort: MessagePort }).writePort;
let store = new Store();
let seq = 0;
let openSeq: number | null = null;
let failure: string | null = null;
const held: QueryRequest[] = [];

const NQ = 'application/n-quads';

function loadText(text: string, bnText: string) {
  if (text) store.load(text, { format: NQ, no_transaction: true });
  // Store.load renames blank nodes per call; parsed quads keep their labels.
  if (bnText) for (const q of oxParse(bnText, { format: NQ }) as Quad[]) store.add(q);
}

function unloadText(text: string, bnText: string) {
  for (const part of [text, bnText]) {
    if (part) for (const q of oxParse(part, { format: NQ }) as Quad[]) store.delete(q);
  }
}

/** Loads every live statement from SQLite, in chunks built by SQLite itself. */
function build(dataDir: string): HeadWriteReply {
  const t0 = performance.now();
  store = new Store();
  const db = new Database(dbPath(dataDir), { readonly: true, fileMustExist: true });
  try {
    db.pragma('cache_size = -65536');
    const readTx = db.transaction(() => {
      const head = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM commits').get() as { seq: number };
      const line = `s || ' ' || p || ' ' || o || CASE g WHEN '' THEN '' ELSE ' ' || g END || ' .'`;
      const chunk = db.prepare(
        `SELECT group_concat(line, char(10)) AS text, MAX(id) AS last FROM
           (SELECT id, ${line} AS line FROM quads WHERE id > ? AND removed_seq IS NULL AND bn = ? ORDER BY id LIMIT 2000)`,
      );
      for (const bn of [0, 1]) {
        let last = 0;
        for (;;) {
          const r = chunk.get(last, bn) as { text: string | null; last: number | null };
          if (r.text === null) break;
          if (bn === 0) loadText(r.text, '');
          else loadText('', r.text);
          last = r.last!;
        }
      }
      return head.seq;
    });
    seq = readTx();
  } finally {
    db.close();
  }
  return { op: 'built', seq, size: store.size, ms: Math.round(performance.now() - t0) };
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
    const message = (e as Error).message ?? String(e);
    // Oxigraph prefixes parse errors with their position ("error at 1:25: ...").
    const kind = /^error at \d+:\d+/.test(message) ? 'syntax' : /format/i.test(message) ? 'format' : 'evaluation';
    return { id: req.id, ok: false, kind, message };
  }
}

writePort.on('message', (msg: HeadWriteMessage) => {
  let reply: HeadWriteReply | null = null;
  try {
    switch (msg.op) {
      case 'build':
        reply = build(msg.dataDir);
        break;
      case 'begin':
        openSeq = msg.seq;
        failure = null;
        break;
      case 'load':
        if (failure === null) loadText(msg.text, msg.bnText);
        break;
      case 'unload':
        unloadText(msg.text, msg.bnText);
        break;
      case 'clear':
        store = new Store();
        break;
      case 'prepare':
        reply = failure !== null ? { op: 'failed', message: failure } : { op: 'prepared', seq: msg.seq };
        break;
      case 'commit':
        seq = msg.seq;
        openSeq = null;
        reply = { op: 'acked', seq, size: store.size };
        break;
      case 'abort':
        openSeq = null;
        failure = null;
        reply = { op: 'acked', seq, size: store.size };
        break;
    }
  } catch (e) {
    // A statement the engine refuses: remember it and fail the commit; the writer unloads.
    failure = (e as Error).message ?? String(e);
    if (msg.op !== 'load') reply = { op: 'failed', message: failure };
  }
  if (reply) writePort.postMessage(reply);
  if (openSeq === null) while (held.length) parentPort!.postMessage(runQuery(held.shift()!));
});

parentPort!.on('message', (req: QueryRequest) => {
  if (openSeq !== null) held.push(req);
  else parentPort!.postMessage(runQuery(req));
});
