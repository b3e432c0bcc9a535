import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

export function spoolDir(dataDir: string): string {
  return join(dataDir, 'spool');
}

export interface LineBatch {
  /** Complete lines (without the newline), at most the requested number; null = not valid UTF-8. */
  lines: (string | null)[];
  /** Bytes those lines occupy in the file, newlines included. */
  bytes: number;
  /** True when the file has nothing after these lines. */
  eof: boolean;
}

const READ_SIZE = 1 << 20;

/**
 * Reads up to `max` lines of a spool file from byte `offset`, reading only as much of the
 * file as they need. A last line without a newline counts as a line at the end of file.
 */
export function readLines(path: string, offset: number, max: number): LineBatch {
  const fd = openSync(path, 'r');
  try {
    const lines: (string | null)[] = [];
    let consumed = 0;
    let carry: Buffer = Buffer.alloc(0);
    let pos = offset;
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const decode = (b: Buffer): string | null => {
      try {
        return decoder.decode(b);
      } catch {
        return null;
      }
    };
    for (;;) {
      const buf = Buffer.allocUnsafe(READ_SIZE);
      const n = readSync(fd, buf, 0, READ_SIZE, pos);
      pos += n;
      const data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      let start = 0;
      for (;;) {
        if (lines.length >= max) return { lines, bytes: consumed, eof: false };
        const nl = data.indexOf(10, start);
        if (nl === -1) break;
        lines.push(decode(data.subarray(start, nl)));
        consumed += nl + 1 - start;
        start = nl + 1;
      }
      carry = Buffer.from(data.subarray(start));
      if (n === 0) {
        if (carry.length > 0 && lines.length < max) {
          lines.push(decode(carry));
          consumed += carry.length;
          carry = Buffer.alloc(0);
        }
        return { lines, bytes: consumed, eof: carry.length === 0 };
      }
    }
  } finally {
    closeSync(fd);
  }
}
