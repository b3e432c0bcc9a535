/**
 * Reads the statements a head store must hold from SQLite, in text chunks SQLite itself
 * concatenates, and hands them to the building replica — in its own thread, so reading
 * overlaps the replica's loading. A few chunks at most are in flight (credit-based), so
 * the replica's heap never holds the dataset as strings.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { dbPath } from './db.js';
import { visibility, visibilityParams, type StatementPin } from './visibility.js';

export type ReaderMessage = { chunk: string; bn: boolean } | { done: true; seq: number } | { failed: string };

const { dataDir, pin } = workerData as { dataDir: string; pin: StatementPin | null };
const LINE = `q.s || ' ' || q.p || ' ' || q.o || CASE q.g WHEN '' THEN '' ELSE ' ' || q.g END || ' .'`;
const IN_FLIGHT = 6;

let credit = IN_FLIGHT;
let wake: (() => void) | null = null;
parentPort!.on('message', () => {
  credit++;
  wake?.();
  wake = null;
});

async function main() {
  const db = new Database(dbPath(dataDir), { readonly: true, fileMustExist: true });
  try {
    db.pragma('cache_size = -65536');
    const v = visibility(pin);
    // One read transaction: every chunk comes from the same snapshot.
    db.exec('BEGIN');
    const head = (db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM commits').get() as { seq: number }).seq;
    const chunk = db.prepare(
      `SELECT group_concat(line, char(10)) AS text, MAX(id) AS last FROM
         (SELECT q.id AS id, ${LINE} AS line FROM quads q ${v.join}
           WHERE q.id > @last AND q.bn = @bn AND ${v.where} ORDER BY q.id LIMIT 2000)`,
    );
    for (const bn of [0, 1]) {
      let last = 0;
      for (;;) {
        const r = chunk.get({ last, bn, ...visibilityParams(pin) }) as { text: string | null; last: number | null };
        if (r.text === null) break;
        while (credit === 0) await new Promise<void>((resolve) => (wake = resolve));
        credit--;
        parentPort!.postMessage({ chunk: r.text, bn: bn === 1 } satisfies ReaderMessage);
        last = r.last!;
      }
    }
    db.exec('COMMIT');
    parentPort!.postMessage({ done: true, seq: pin ? pin.seq : head } satisfies ReaderMessage);
  } finally {
    db.close();
  }
}

main().catch((e) => parentPort!.postMessage({ failed: (e as Error).message } satisfies ReaderMessage));
