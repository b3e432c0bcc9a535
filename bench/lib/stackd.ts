/** Starts a real stackd server process for benchmarks and waits until it is ready. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../../bin/stackd', import.meta.url));

export interface BenchServer {
  proc: ChildProcess;
  port: number;
  token: string;
  url: string;
  startedAt: number;
  readyAt: number;
  stop(): Promise<void>;
}

/** `onSpawn` gets the process at once (to read its log lines, or to kill it if it never gets ready). */
export function startBenchServer(dataDir: string, args: string[] = [], token = 'bench-token', onSpawn?: (proc: ChildProcess) => void): Promise<BenchServer> {
  const startedAt = performance.now();
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'info', ...args], {
    env: { ...process.env, STACKD_TOKEN: token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onSpawn?.(proc);
  return new Promise((resolve, reject) => {
    let port = 0;
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      let m: { msg?: string; port?: number };
      try {
        m = JSON.parse(line);
      } catch {
        return;
      }
      if (m.msg === 'listening') port = m.port!;
      if (m.msg === 'ready') {
        resolve({
          proc, port, token, url: `http://127.0.0.1:${port}`, startedAt, readyAt: performance.now(),
          stop: () => new Promise<void>((r) => {
            proc.removeAllListeners('exit');
            proc.once('exit', () => r());
            proc.kill('SIGTERM');
          }),
        });
      }
    });
  });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}
