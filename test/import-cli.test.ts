/**
 * `stackd import`, black-box: NDJSON (as a durable job) and N-Triples into a running
 * server, offline into a data directory no server uses, and the refusal to write offline
 * into a directory a server is running on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startStackd, selectRows, removeDir, tempDataDir, type Stackd } from './helpers/server.js';

const R = 'https://littlebigbrain.com/r/';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<CliResult> {
  const e: Record<string, string> = { ...(process.env as Record<string, string>), ...env };
  for (const k of Object.keys(e)) if (k.startsWith('STACKD_') && !(k in env)) delete e[k];
  const proc = spawn(process.execPath, [BIN, ...args], { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

function ndjson(tag: string, n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({ source: { type: 'Person', name: `${tag}-s${i}` }, relation: 'knows', target: { type: 'Person', name: `${tag}-t${i % 101}` }, evidence: { text: `${tag} ${i}` } }));
  }
  return lines.join('\n') + '\n';
}

async function count(s: Stackd, where: string): Promise<number> {
  const rows = await selectRows(s, `SELECT (COUNT(*) AS ?n) WHERE { ${where} }`);
  return Number(rows[0]!.n!.value);
}

async function knows(s: Stackd, tag: string): Promise<number> {
  return count(s, `?s <${R}knows> ?o . ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l FILTER(STRSTARTS(?l, "${tag}-"))`);
}

async function headSeq(s: Stackd): Promise<number> {
  return ((await (await s.fetch('/v1/status')).json()) as { head_seq: number }).head_seq;
}

const files = mkdtempSync(join(tmpdir(), 'stackd-import-cli-'));
test.after(() => removeDir(files));

test('stackd import --url: an NDJSON file as a durable job and an N-Triples file, with a summary; a rerun is the same job', async () => {
  const s = await startStackd();
  try {
    const nd = join(files, 'people.ndjson');
    writeFileSync(nd, ndjson('cli', 5000));
    const r = await runCli(['import', '--url', s.url, '--batch', '1000', nd], { STACKD_TOKEN: s.token! });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /people\.ndjson: succeeded, 5000 lines, commit_seq 5, 0 bad lines/);
    assert.match(r.stderr, /records/, 'progress lines on stderr when not a terminal');
    assert.equal(await knows(s, 'cli'), 5000);
    const head = await headSeq(s);

    // The same file again: the same job (its key is the file's content), nothing written twice.
    const again = await runCli(['import', '--url', s.url, '--token', s.token!, '--batch', '1000', nd]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /succeeded, 5000 lines/);
    assert.equal(await headSeq(s), head);
    assert.equal(await knows(s, 'cli'), 5000);

    const nt = join(files, 'data.nt');
    const triples: string[] = [];
    for (let i = 0; i < 3000; i++) triples.push(`<http://example.org/s${i}> <http://example.org/p> "v${i}" .`);
    writeFileSync(nt, triples.join('\n') + '\n');
    const rdf = await runCli(['import', '--url', s.url, nt], { STACKD_TOKEN: s.token! });
    assert.equal(rdf.code, 0, rdf.stderr);
    assert.match(rdf.stdout, /data\.nt: 3000 statements read/);
    assert.equal(await count(s, '?s <http://example.org/p> ?o'), 3000);

    // A bad line under --strict fails the command, naming the line.
    const bad = join(files, 'bad.ndjson');
    writeFileSync(bad, ndjson('bad', 3) + 'oops\n');
    const strict = await runCli(['import', '--url', s.url, '--strict', bad], { STACKD_TOKEN: s.token! });
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, /failed.*line 4/);

    // Without a token: a clear error, exit 1.
    const noToken = await runCli(['import', '--url', s.url, nd]);
    assert.equal(noToken.code, 1);
    assert.match(noToken.stderr, /401/);
  } finally {
    await s.stop();
    removeDir(s.dataDir);
  }
});

test('stackd import --data-dir (offline), then a server on that directory serves the data', async () => {
  const dataDir = tempDataDir();
  try {
    const nd = join(files, 'offline.ndjson');
    writeFileSync(nd, ndjson('off', 4000));
    const nt = join(files, 'offline.nt');
    writeFileSync(nt, '<http://example.org/a> <http://example.org/q> <http://example.org/b> .\n');
    const r = await runCli(['import', '--data-dir', dataDir, '--batch', '1000', nd, nt]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /offline\.ndjson: succeeded, 4000 lines, commit_seq 4, 0 bad lines/);
    assert.match(r.stdout, /offline\.nt: 1 statements read/);
    assert.deepEqual(existsSync(join(dataDir, 'spool')) ? readdirSync(join(dataDir, 'spool')) : [], []);

    const s = await startStackd({ dataDir });
    try {
      assert.equal(await knows(s, 'off'), 4000);
      assert.equal(await count(s, '<http://example.org/a> <http://example.org/q> ?o'), 1);
      assert.equal(await headSeq(s), 5);

      // Offline into a directory a server is running on: refused, nothing written.
      const refused = await runCli(['import', '--data-dir', dataDir, nd]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /in use by a running stackd/);
      assert.equal(await headSeq(s), 5);
      // Nor does a second server open it.
      await assert.rejects(startStackd({ dataDir }), /in use by another stackd process/);
      assert.equal(await headSeq(s), 5);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('stackd import refuses what it cannot load, with a message', async () => {
  const dataDir = tempDataDir();
  try {
    const r1 = await runCli(['import', '--data-dir', dataDir, join(files, 'missing.ndjson')]);
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /no such file/);
    const odd = join(files, 'data.csv');
    writeFileSync(odd, 'a,b\n');
    const r2 = await runCli(['import', '--data-dir', dataDir, odd]);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /--format/);
    const nd = join(files, 'x.ndjson');
    writeFileSync(nd, ndjson('x', 1));
    const r3 = await runCli(['import', '--data-dir', dataDir, '--batch', '0', nd]);
    assert.notEqual(r3.code, 0);
    assert.match(r3.stderr, /--batch/);
  } finally {
    removeDir(dataDir);
  }
});
