import Database from 'better-sqlite3';
import { dbPath, type DB } from '../store/db.js';
import { visibility, visibilityParams, type StatementPin } from '../store/visibility.js';

export interface ExportFormat {
  name: 'turtle' | 'ntriples' | 'trig' | 'nquads';
  mediaType: string;
  /** Triple formats export the union of all graphs (each triple once); quad formats keep graphs. */
  quads: boolean;
}

const TURTLE: ExportFormat = { name: 'turtle', mediaType: 'text/turtle', quads: false };
const NT: ExportFormat = { name: 'ntriples', mediaType: 'application/n-triples', quads: false };
const TRIG: ExportFormat = { name: 'trig', mediaType: 'application/trig', quads: true };
const NQ: ExportFormat = { name: 'nquads', mediaType: 'application/n-quads', quads: true };

export const EXPORT_FORMATS: Record<string, ExportFormat> = {
  turtle: TURTLE, ttl: TURTLE, nt: NT, ntriples: NT, 'n-triples': NT, trig: TRIG, nq: NQ, nquads: NQ, 'n-quads': NQ,
};

interface Row {
  s: string;
  p: string;
  o: string;
  g: string;
}

function statementSql(f: ExportFormat, pin: StatementPin | null): string {
  const v = visibility(pin);
  const order = f.name === 'trig' ? 'q.g, q.s, q.p, q.o' : 'q.s, q.p, q.o, q.g';
  return `SELECT q.s AS s, q.p AS p, q.o AS o, q.g AS g FROM quads q ${v.join} WHERE ${v.where} ORDER BY ${order}`;
}

/** Serialises sorted rows incrementally; `push` returns text to emit, `end` the tail. */
class Writer {
  private prev: Row | null = null;
  private inGraph = false;
  returned = 0;

  constructor(private readonly f: ExportFormat) {}

  push(r: Row): string {
    const prev = this.prev;
    if (!this.f.quads && prev && prev.s === r.s && prev.p === r.p && prev.o === r.o) return ''; // same triple in another graph
    this.prev = r;
    this.returned++;
    switch (this.f.name) {
      case 'ntriples':
        return `${r.s} ${r.p} ${r.o} .\n`;
      case 'nquads':
        return r.g === '' ? `${r.s} ${r.p} ${r.o} .\n` : `${r.s} ${r.p} ${r.o} ${r.g} .\n`;
      case 'turtle': {
        // Group by subject and predicate: "s p o1 , o2 ; p2 o3 ."
        if (prev && prev.s === r.s) {
          if (prev.p === r.p) return ` ,\n        ${r.o}`;
          return ` ;\n    ${r.p} ${r.o}`;
        }
        return `${prev ? ' .\n' : ''}${r.s} ${r.p} ${r.o}`;
      }
      case 'trig': {
        let out = '';
        if (!prev || prev.g !== r.g) {
          if (this.inGraph) out += '}\n';
          this.inGraph = r.g !== '';
          if (this.inGraph) out += `${r.g} {\n`;
        }
        return out + `${this.inGraph ? '  ' : ''}${r.s} ${r.p} ${r.o} .\n`;
      }
    }
  }

  end(): string {
    if (this.f.name === 'turtle') return this.prev ? ' .\n' : '';
    if (this.f.name === 'trig' && this.inGraph) return '}\n';
    return '';
  }
}

const ROWS_PER_PULL = 4096;

/**
 * Streams the live statements from SQLite (the source of truth) on a dedicated read-only
 * connection: one statement, so one consistent snapshot, and never the whole graph in memory.
 */
export function exportStream(dataDir: string, f: ExportFormat, pin: StatementPin | null = null): ReadableStream<Uint8Array> {
  let db: DB | null = null;
  let it: IterableIterator<Row> | null = null;
  const writer = new Writer(f);
  const enc = new TextEncoder();
  const close = () => {
    if (it?.return) it.return();
    it = null;
    db?.close();
    db = null;
  };
  return new ReadableStream<Uint8Array>({
    start() {
      db = new Database(dbPath(dataDir), { readonly: true, fileMustExist: true });
      it = db.prepare(statementSql(f, pin)).iterate(visibilityParams(pin)) as IterableIterator<Row>;
    },
    pull(controller) {
      let out = '';
      for (let i = 0; i < ROWS_PER_PULL; i++) {
        const r = it!.next();
        if (r.done) {
          out += writer.end();
          if (out) controller.enqueue(enc.encode(out));
          controller.close();
          close();
          return;
        }
        out += writer.push(r.value);
      }
      controller.enqueue(enc.encode(out));
    },
    cancel() {
      close();
    },
  });
}

export function countLiveStatements(db: DB, f: ExportFormat, pin: StatementPin | null = null): number {
  const v = visibility(pin);
  const sql = f.quads
    ? `SELECT COUNT(*) AS n FROM quads q ${v.join} WHERE ${v.where}`
    : `SELECT COUNT(*) AS n FROM (SELECT DISTINCT q.s, q.p, q.o FROM quads q ${v.join} WHERE ${v.where})`;
  return (db.prepare(sql).get(visibilityParams(pin)) as { n: number }).n;
}

/** A bounded, deterministic preview (the first statements in sort order) as one string. */
export function exportPreview(dataDir: string, f: ExportFormat, max: number, pin: StatementPin | null = null) {
  const db = new Database(dbPath(dataDir), { readonly: true, fileMustExist: true });
  try {
    const total = countLiveStatements(db, f, pin);
    const writer = new Writer(f);
    let data = '';
    for (const r of db.prepare(statementSql(f, pin)).iterate(visibilityParams(pin)) as IterableIterator<Row>) {
      if (writer.returned >= max) break;
      data += writer.push(r);
    }
    data += writer.end();
    return { data, returned_triples: writer.returned, total_triples: total, truncated: writer.returned < total };
  } finally {
    db.close();
  }
}
