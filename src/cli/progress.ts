import cliProgress from 'cli-progress';

/** A progress display: a bar with records, rate and ETA on a terminal, plain lines otherwise. */
export interface Progress {
  update(done: number, records: number): void;
  stop(): void;
}

export function progress(label: string, total: number, unit: 'bytes'): Progress {
  const started = Date.now();
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} |{bar}| {percentage}% | {records} records | {rate} rec/s | ETA {eta_formatted}`,
        stream: process.stderr,
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { records: 0, rate: 0 });
    return {
      update(done, records) {
        const secs = (Date.now() - started) / 1000;
        bar.update(done, { records, rate: secs > 0 ? Math.round(records / secs) : 0 });
      },
      stop() {
        bar.stop();
      },
    };
  }
  let lastPrint = 0;
  let printed = '';
  const line = (done: number, records: number) => {
    if (printed === `${done}/${records}`) return;
    printed = `${done}/${records}`;
    const secs = (Date.now() - started) / 1000;
    const pct = total > 0 ? ((100 * done) / total).toFixed(1) : '100.0';
    const rate = secs > 0 ? Math.round(records / secs) : 0;
    const eta = done > 0 && done < total ? Math.round((secs * (total - done)) / done) : 0;
    process.stderr.write(`${label}: ${pct}% of ${total} ${unit}, ${records} records, ${rate} rec/s, ETA ${eta}s\n`);
  };
  let last = { done: 0, records: 0 };
  return {
    update(done, records) {
      last = { done, records };
      if (Date.now() - lastPrint >= 2000) {
        lastPrint = Date.now();
        line(done, records);
      }
    },
    stop() {
      line(last.done, last.records);
    },
  };
}
