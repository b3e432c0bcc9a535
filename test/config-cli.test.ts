/**
 * The command line and configuration, black-box: help texts, precedence
 * (flag > STACKD_* env > TOML file > defaults), refusals with clear messages, and the
 * first-start token.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { BIN, startStackd, removeDir, tempDataDir, type Stackd } from './helpers/server.js';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the process was still running at the deadline and had to be killed. */
  timedOut: boolean;
}

/** Runs `stackd <args>` to completion (killing it after `timeoutMs`). */
function runCli(args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...opts.env };
  for (const k of Object.keys(env)) if (k.startsWith('STACKD_') && !(opts.env && k in opts.env)) delete env[k];
  const proc = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill('SIGKILL');
  }, opts.timeoutMs ?? 15_000);
  return new Promise((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    }),
  );
}

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

async function graphServed(s: Stackd, graph: string): Promise<boolean> {
  const res = await s.fetch('/v1/status?graph=' + encodeURIComponent(graph));
  const body = (await res.json()) as { graph?: string; error?: { code: string; message: string } };
  if (res.status === 200) return true;
  assert.equal(res.status, 404);
  assert.equal(body.error!.code, 'graph_not_found');
  return false;
}

const TOKEN_LINE = /API token \(shown once[^)]*\): (\S+)/;

/** The server's stderr as the test has read it so far: it arrives through its own pipe, so give it a moment. */
async function stderrOf(s: Stackd): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return s.stderr.join('\n');
}

test('help texts list the commands and every flag', async () => {
  const top = await runCli(['--help']);
  assert.equal(top.code, 0);
  for (const word of ['serve', 'token', '--version', '--help']) assert.ok(top.stdout.includes(word), `stackd --help mentions ${word}`);

  const serve = await runCli(['serve', '--help']);
  assert.equal(serve.code, 0);
  // Every key config.example.toml documents can be given as a flag.
  const example = readFileSync(new URL('../../config.example.toml', import.meta.url), 'utf8');
  const keys = [...example.matchAll(/^#?\s*([a-z_]+)\s*=/gm)].map((m) => m[1]!);
  assert.ok(keys.length >= 10);
  for (const flag of [
    '--config', '--host', '--port', '--data-dir', '--token-file', '--graph', '--branch', '--query-timeout-ms', '--query-workers',
    '--max-import-bytes', '--max-query-bytes', '--union-default-graph', '--iri-base', '--log-level',
    ...keys.map((k) => '--' + k.replace(/_/g, '-')),
  ]) {
    assert.ok(serve.stdout.includes(flag), `serve --help lists ${flag}:\n${serve.stdout}`);
  }
  for (const env of ['STACKD_TOKEN', 'STACKD_HOST', 'STACKD_PORT', 'STACKD_DATA_DIR', 'STACKD_GRAPH', 'STACKD_QUERY_TIMEOUT_MS']) {
    assert.ok(serve.stdout.includes(env), `serve --help names ${env}`);
  }

  const create = await runCli(['token', 'create', '--help']);
  assert.equal(create.code, 0);
  for (const flag of ['--data-dir', '--config', '--label']) assert.ok(create.stdout.includes(flag), `token create --help lists ${flag}`);

  const version = await runCli(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout.trim(), /^\d+\.\d+\.\d+/);

  const unknown = await runCli(['serve', '--no-such-flag']);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /unknown option/);
});

test('precedence: flag > STACKD_* env > TOML file > defaults', async () => {
  const dir = tempDataDir();
  const toml = join(dir, 'stackd.toml');
  writeFileSync(toml, 'graph = "from-toml"\nquery_workers = 2\nlog_level = "warn"\nmax_query_bytes = 100000\n');
  const dataDir = join(dir, 'data');
  try {
    // TOML over defaults (the harness sets STACKD_LOG_LEVEL=info: env over TOML, or it would never see "ready").
    let s = await startStackd({ dataDir, args: ['--config', toml] });
    try {
      assert.equal(await graphServed(s, 'from-toml'), true);
      assert.equal(await graphServed(s, 'main'), false);
      const status = (await (await s.fetch('/v1/status')).json()) as { graph: string; query_workers: number };
      assert.equal(status.graph, 'from-toml');
      assert.equal(status.query_workers, 2);
    } finally {
      await s.stop();
    }
    // STACKD_CONFIG names the file too; env over TOML.
    s = await startStackd({ dataDir, env: { STACKD_CONFIG: toml, STACKD_GRAPH: 'from-env', STACKD_QUERY_WORKERS: '1' } });
    try {
      assert.equal(await graphServed(s, 'from-env'), true);
      assert.equal(await graphServed(s, 'from-toml'), false);
      const status = (await (await s.fetch('/v1/status')).json()) as { query_workers: number };
      assert.equal(status.query_workers, 1);
    } finally {
      await s.stop();
    }
    // Flag over env over TOML.
    s = await startStackd({
      dataDir,
      env: { STACKD_GRAPH: 'from-env', STACKD_MAX_QUERY_BYTES: '50000' },
      args: ['--config', toml, '--graph', 'from-flag', '--query-workers', '3', '--max-query-bytes', '64'],
    });
    try {
      const long = await s.fetch('/sparql', {
        method: 'POST',
        headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' },
        body: 'SELECT ?s WHERE { ?s ?p ?o } LIMIT 1 # a comment that makes this query longer than 64 bytes',
      });
      assert.equal(long.status, 413, '--max-query-bytes wins over the env and the file');
      await long.body?.cancel();
      assert.equal(await graphServed(s, 'from-flag'), true);
      assert.equal(await graphServed(s, 'from-env'), false);
      assert.equal(await graphServed(s, 'from-toml'), false);
      const status = (await (await s.fetch('/v1/status')).json()) as { query_workers: number };
      assert.equal(status.query_workers, 3);
    } finally {
      await s.stop();
    }
    // Defaults.
    s = await startStackd({ dataDir });
    try {
      assert.equal(await graphServed(s, 'main'), true);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dir);
  }
});

test('bad configuration is refused with a clear message and a non-zero exit', async () => {
  const dir = tempDataDir();
  const dataDir = join(dir, 'data');
  const cases: { name: string; toml?: string; env?: Record<string, string>; args?: string[]; expect: RegExp }[] = [
    { name: 'unknown key', toml: 'graph = "g"\nqurey_timeout_ms = 5\n', expect: /unknown key "qurey_timeout_ms"/ },
    { name: 'malformed TOML', toml: 'graph = "unterminated\nport = 1\n', expect: /stackd\.toml/ },
    { name: 'wrong type', toml: 'port = "eighty"\n', expect: /port must be an integer/ },
    { name: 'out of range', toml: 'port = 70000\n', expect: /port must be <= 65535/ },
    { name: 'a table', toml: '[server]\nport = 1\n', expect: /unknown key "server"/ },
    { name: 'bad env value', env: { STACKD_QUERY_TIMEOUT_MS: 'soon' }, expect: /STACKD_QUERY_TIMEOUT_MS.*integer/ },
    { name: 'bad flag value', args: ['--query-workers', 'many'], expect: /--query-workers.*integer/ },
    { name: 'missing config file', args: ['--config', join(dir, 'nope.toml')], expect: /config file not found/ },
    { name: 'missing token file', args: ['--token-file', join(dir, 'no-token')], expect: /token file .*no-token cannot be read: no such file/ },
    { name: 'unusable data dir', args: ['--data-dir', '/etc/passwd/data'], expect: /cannot open the data directory \/etc\/passwd\/data/ },
  ];
  try {
    for (const c of cases) {
      const args = ['serve', '--port', '0', '--data-dir', dataDir, ...(c.args ?? [])];
      if (c.toml !== undefined) {
        writeFileSync(join(dir, 'stackd.toml'), c.toml);
        args.push('--config', join(dir, 'stackd.toml'));
      }
      const r = await runCli(args, { env: { STACKD_TOKEN: 'tok', ...c.env }, timeoutMs: 10_000 });
      assert.equal(r.timedOut, false, `${c.name}: refused, not started`);
      assert.notEqual(r.code, 0, `${c.name}: non-zero exit`);
      assert.match(r.stderr, c.expect, `${c.name}: clear message`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, `${c.name}: a message, not a stack trace:\n${r.stderr}`);
    }
    // A port in use.
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as AddressInfo).port;
      const r = await runCli(['serve', '--port', String(port), '--data-dir', dataDir], { env: { STACKD_TOKEN: 'tok' }, timeoutMs: 10_000 });
      assert.equal(r.timedOut, false);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1 port ${port}: the port is already in use`));
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    } finally {
      busy.close();
    }
    const t = await runCli(['token', 'create', '--data-dir', '/etc/passwd/data']);
    assert.notEqual(t.code, 0);
    assert.match(t.stderr, /cannot open the data directory/);
    assert.doesNotMatch(t.stderr, /\n\s+at /);
  } finally {
    removeDir(dir);
  }
});

test('first start on loopback generates a token, prints it once, stores only its hash', async () => {
  const dataDir = tempDataDir();
  try {
    let s = await startStackd({ dataDir, token: null });
    let token: string;
    try {
      const m = TOKEN_LINE.exec(await stderrOf(s));
      assert.ok(m, `the token is printed on stderr:\n${s.stderr.join('\n')}`);
      token = m[1]!;
      assert.ok(!s.logs.join('\n').includes(token), 'not in the (stdout) log');
      const ok = await s.fetch('/v1/status', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
      const no = await s.fetch('/v1/status');
      assert.equal(no.status, 401);
      await no.body?.cancel();
      const wrong = await s.fetch('/v1/status', { headers: { authorization: `Bearer ${token}x` } });
      assert.equal(wrong.status, 401);
      await wrong.body?.cancel();
    } finally {
      await s.kill(); // leave the WAL as it is: the token must not be in it either
    }
    for (const f of filesUnder(dataDir)) {
      assert.ok(!readFileSync(f).includes(token), `${f} does not hold the token in plain text`);
    }

    s = await startStackd({ dataDir, token: null });
    try {
      assert.doesNotMatch(await stderrOf(s), TOKEN_LINE, 'a second start prints no new token');
      const ok = await s.fetch('/v1/status', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('a non-loopback address without a token is refused; with one it starts', async () => {
  const dataDir = tempDataDir();
  try {
    const r = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', dataDir], { timeoutMs: 10_000 });
    assert.equal(r.timedOut, false, 'refused, not started');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /refusing to listen on 0\.0\.0\.0 without an API token/);
    assert.doesNotMatch(r.stderr, TOKEN_LINE, 'no token was generated');
    // The refusal left no token behind: a later loopback start still generates the first one.
    const s = await startStackd({ dataDir, token: null });
    try {
      assert.match(await stderrOf(s), TOKEN_LINE);
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
  const other = tempDataDir();
  try {
    const s = await startStackd({ dataDir: other, args: ['--host', '0.0.0.0'] });
    try {
      const res = await s.fetch('/v1/status');
      assert.equal(res.status, 200);
      await res.body?.cancel();
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(other);
  }
});

test('stackd token create prints a token that a server then accepts', async () => {
  const dataDir = tempDataDir();
  try {
    const r = await runCli(['token', 'create', '--data-dir', dataDir, '--label', 'ci']);
    assert.equal(r.code, 0, r.stderr);
    const token = r.stdout.trim();
    assert.match(token, /^\S{20,}$/);
    assert.match(r.stderr, /not shown again/);
    for (const f of filesUnder(dataDir)) assert.ok(!readFileSync(f).includes(token), `${f} does not hold the token`);

    // A data dir that has a token may listen beyond loopback, and generates none.
    const s = await startStackd({ dataDir, token: null, args: ['--host', '0.0.0.0'] });
    try {
      assert.doesNotMatch(await stderrOf(s), TOKEN_LINE);
      const ok = await s.fetch('/v1/status', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
      const no = await s.fetch('/v1/status', { headers: { authorization: 'Bearer nope' } });
      assert.equal(no.status, 401);
      await no.body?.cancel();
    } finally {
      await s.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('--token-file supplies the token; port 0 logs the port it chose', async () => {
  const dir = tempDataDir();
  const dataDir = join(dir, 'data');
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'file-token-123456\n');
  try {
    const s = await startStackd({ dataDir, token: null, args: ['--token-file', tokenFile] });
    try {
      assert.doesNotMatch(await stderrOf(s), TOKEN_LINE, 'no token generated when one is configured');
      const ok = await s.fetch('/v1/status', { headers: { authorization: 'Bearer file-token-123456' } });
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
      const no = await s.fetch('/v1/status', { headers: { authorization: 'Bearer other' } });
      assert.equal(no.status, 401);
      await no.body?.cancel();

      const listening = s.logs.map((l) => JSON.parse(l) as { msg: string; port?: number; url?: string }).find((l) => l.msg === 'listening');
      assert.ok(listening && typeof listening.port === 'number' && listening.port > 0, 'the log names the chosen port');
      assert.equal(listening.port, s.port);
      assert.ok(listening.url?.endsWith(`:${s.port}`));
      const v = await fetch(`http://127.0.0.1:${listening.port}/version`);
      assert.equal(v.status, 200);
      await v.body?.cancel();
    } finally {
      await s.stop();
    }
    // STACKD_TOKEN_FILE works the same way.
    const e = await startStackd({ dataDir, token: null, env: { STACKD_TOKEN_FILE: tokenFile } });
    try {
      const ok = await e.fetch('/v1/status', { headers: { authorization: 'Bearer file-token-123456' } });
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
    } finally {
      await e.stop();
    }
    // An empty token file is a clear refusal.
    writeFileSync(tokenFile, '\n');
    const r = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--token-file', tokenFile], { timeoutMs: 10_000 });
    assert.equal(r.timedOut, false);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /token file .* is empty/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  } finally {
    removeDir(dir);
  }
});
