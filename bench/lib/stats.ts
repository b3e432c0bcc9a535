/** Small statistics helpers shared by the benchmarks. */

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(xs: number[]): number {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/**
 * Median of the pairwise ratios num[i] / den[i]. Pairs are measured side by side in one
 * repetition, so machine drift between repetitions cancels within each ratio; the median then
 * drops the repetitions a burst of noise hit on one side only.
 */
export function medianRatio(num: number[], den: number[]): number {
  if (num.length !== den.length) throw new Error(`medianRatio: ${num.length} vs ${den.length} values`);
  return median(num.map((n, i) => n / den[i]!));
}

/** Latencies (ms) of one query of the mix, or of all of them. */
export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
  meanMs: number;
}

export function summarize(latencies: number[]): LatencySummary {
  const s = latencies.filter(Number.isFinite).sort((a, b) => a - b);
  const sum = s.reduce((a, b) => a + b, 0);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), meanMs: s.length ? sum / s.length : NaN };
}

export const fmt = (n: number, d = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '-';

/** Per-repetition values on one compact line: "1,210 · 1,305 · 1,190". */
export const fmtReps = (xs: number[], d = 0) => xs.map((x) => fmt(x, d)).join(' · ');
