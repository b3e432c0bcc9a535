/**
 * Folds the WAL into the database file on its own connection and thread, so the writer
 * never waits for a checkpoint's page copies and fsyncs (after a 60 MiB import that is
 * ≈ 0.5 s, which a back-to-back import would otherwise queue behind). A PASSIVE checkpoint
 * takes no write lock: the writer keeps committing while it runs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { dbPath } from './db.js';

const { dataDir } = workerData as { dataDir: string };
const db = new Database(dbPath(dataDir), { fileMustExist: true });
db.pragma('synchronous = FULL'); // the checkpoint fsyncs the database file before the WAL is reused

parentPort!.on('message', (m: { id: number } | 'close') => {
  if (m === 'close') {
    db.close();
    process.exit(0);
  }
  let done = false;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    done = r !== undefined && r.busy === 0;
  } catch {
    /* busy or closing: the next request tries again */
  }
  parentPort!.postMessage({ id: m.id, done });
});
