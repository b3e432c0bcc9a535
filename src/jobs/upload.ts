import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { DB } from '../store/db.js';
import { ApiError, badRequest } from '../http/errors.js';
import { spoolDir } from './spool.js';

export interface SpooledUpload {
  /** File name under the spool directory. */
  file: string;
  bytes: number;
  /** sha256 over the job options and the uploaded bytes: what an Idempotency-Key is bound to. */
  hash: string;
}

/**
 * Streams a request body to a spool file as it arrives (memory stays flat however large
 * the upload), hashing it on the way, and fsyncs it before returning. A body that breaks
 * off leaves no file behind.
 */
export async function spoolUpload(req: Request, dataDir: string, options: unknown): Promise<SpooledUpload> {
  const dir = spoolDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = `upload-${randomUUID()}.part`;
  const path = join(dir, file);
  const hash = createHash('sha256').update(JSON.stringify(options)).update('\n');
  const fh = await open(path, 'wx');
  let bytes = 0;
  let ok = false;
  try {
    if (req.body) {
      const reader = req.body.getReader();
      for (;;) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch {
          throw badRequest('body_read_failed', 'the upload broke off before the end of the body; no job was created', 'body');
        }
        if (r.done) break;
        hash.update(r.value);
        bytes += r.value.byteLength;
        await fh.write(r.value).catch(storageError);
      }
    }
    if (bytes === 0) throw badRequest('empty_body', 'the upload is empty: send NDJSON records, one per line', 'body');
    await fh.sync().catch(storageError);
    ok = true;
  } finally {
    await fh.close();
    if (!ok) rmSync(path, { force: true });
  }
  return { file, bytes, hash: hash.digest('hex') };
}

function storageError(e: NodeJS.ErrnoException): never {
  if (e.code === 'ENOSPC' || e.code === 'EDQUOT') {
    throw new ApiError(507, 'api_error', 'storage_full', 'the data directory is out of space for this upload; no job was created', { retryable: true });
  }
  throw e;
}

/** At start: drop partial uploads and spool files no unfinished job refers to. */
export function cleanSpool(db: DB, dataDir: string) {
  const dir = spoolDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const live = new Set(
    (db.prepare("SELECT spool FROM import_jobs WHERE spool IS NOT NULL AND state NOT IN ('cancelled', 'succeeded', 'failed')").all() as { spool: string }[]).map((r) => r.spool),
  );
  for (const n of names) if (!live.has(n)) rmSync(join(dir, n), { force: true });
}
