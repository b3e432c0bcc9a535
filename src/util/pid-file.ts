import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `<data_dir>/stackd.pid` marks a data directory a server is running on. */
const file = (dataDir: string) => join(dataDir, 'stackd.pid');

export function writePidFile(dataDir: string) {
  writeFileSync(file(dataDir), `${process.pid}\n`);
}

export function removePidFile(dataDir: string) {
  try {
    if (readPidFile(dataDir) === process.pid) rmSync(file(dataDir), { force: true });
  } catch {
    /* already gone */
  }
}

/** The pid of a live server using the directory, or null (a stale file from a crash is ignored). */
export function readPidFile(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(file(dataDir), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}
