/** Process figures read from /proc (Linux): resident memory and CPU time of a process or a tree. */
import { readFileSync, readdirSync } from 'node:fs';

export interface Mem {
  rssMiB: number;
  hwmMiB: number;
}

export function procMem(pid: number | 'self'): Mem | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Resident memory of a process and all its descendants. */
export function treeMem(root: number): Mem & { processes: number } {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(d));
      children.set(ppid, list);
    } catch {
      /* gone */
    }
  }
  const total = { rssMiB: 0, hwmMiB: 0, processes: 0 };
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const m = procMem(pid);
    if (m) {
      total.rssMiB += m.rssMiB;
      total.hwmMiB += m.hwmMiB;
      total.processes++;
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

export const loadAvg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
