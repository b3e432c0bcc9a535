import { Command, Option } from 'commander';
import { loadConfig, ConfigError, type Config } from '../config/config.js';
import { openDb } from '../store/db.js';
import { createStoredToken } from '../auth/tokens.js';
import { loadBuildInfo } from '../util/build-info.js';
import type { FileKind } from './import.js';
import { StartupError } from '../util/startup-error.js';

/**
 * serve's flags: one per config key, named after it (data_dir → --data-dir), each
 * naming its environment variable (STACKD_DATA_DIR).
 */
const SERVE_FLAGS: { key: string; flags: string; help: string }[] = [
  { key: 'host', flags: '-H, --host <addr>', help: 'address to bind; anything but loopback needs a token (default 127.0.0.1)' },
  { key: 'port', flags: '-p, --port <n>', help: 'port; 0 picks a free one and the log says which (default 8080)' },
  { key: 'data_dir', flags: '-d, --data-dir <dir>', help: 'data directory (default ./data)' },
  { key: 'token_file', flags: '--token-file <file>', help: 'file whose first line is the API token' },
  { key: 'graph', flags: '--graph <name>', help: 'the graph this server serves (default main)' },
  { key: 'branch', flags: '--branch <name>', help: 'the branch this server serves (default main)' },
  { key: 'query_timeout_ms', flags: '--query-timeout-ms <ms>', help: 'cancel queries running longer than this (default 30000)' },
  { key: 'query_workers', flags: '--query-workers <n>', help: 'head replicas answering queries in parallel, each a full copy in memory (default 1)' },
  { key: 'max_import_bytes', flags: '--max-import-bytes <n>', help: 'largest accepted import body (default 67108864)' },
  { key: 'max_query_bytes', flags: '--max-query-bytes <n>', help: 'largest accepted SPARQL query body (default 1048576)' },
  { key: 'union_default_graph', flags: '--union-default-graph <bool>', help: "a query's default graph is the union of all graphs (default true)" },
  { key: 'pinned_cache_bytes', flags: '--pinned-cache-bytes <n>', help: 'memory bound (estimated) of cached as-of stores (default 1073741824)' },
  { key: 'pinned_stores_max', flags: '--pinned-stores-max <n>', help: 'most as-of stores kept at once (default 4)' },
  { key: 'job_retention_days', flags: '--job-retention-days <n>', help: 'days finished import jobs are kept (default 7)' },
  { key: 'iri_base', flags: '--iri-base <iri>', help: "base of the generic schema's IRIs (default https://littlebigbrain.com/)" },
  { key: 'log_level', flags: '--log-level <level>', help: 'fatal|error|warn|info|debug|trace|silent (default info)' },
];

/** Commander's name for a config key's flag: data_dir → dataDir. */
const optionName = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Commander options → config keys (flags win over env and file). */
function flagsFrom(opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key } of SERVE_FLAGS) if (opts[optionName(key)] !== undefined) out[key] = opts[optionName(key)];
  return out;
}

function configFrom(opts: Record<string, unknown>): Config {
  return loadConfig({ flags: flagsFrom(opts), configPath: (opts.config as string | undefined) ?? null });
}

function fail(e: unknown): never {
  const msg = e instanceof ConfigError || e instanceof StartupError ? e.message : (e as Error).stack ?? String(e);
  process.stderr.write(`stackd: ${msg}\n`);
  process.exit(e instanceof ConfigError || e instanceof StartupError ? 2 : 1);
}

const program = new Command();
program
  .name('stackd')
  .description('Self-hosted knowledge-graph server: one stack, the hosted data-plane API and SPARQL 1.1, on embedded Oxigraph and SQLite.')
  .version(loadBuildInfo().version, '-V, --version', 'print the stackd version')
  .showHelpAfterError();

const configOption = () => new Option('-c, --config <file>', 'TOML config file (also STACKD_CONFIG)');
const flagOption = (key: string) => {
  const f = SERVE_FLAGS.find((x) => x.key === key)!;
  return new Option(f.flags, `${f.help}; also STACKD_${key.toUpperCase()}`);
};
const dataDirOption = () => flagOption('data_dir');

const serveCommand = program
  .command('serve')
  .description(
    'Run the server. Precedence: flags > STACKD_* environment > TOML file > defaults. The token comes from STACKD_TOKEN, ' +
      'token_file, or tokens created with "stackd token create"; without any, the first start on loopback generates one and prints it once.',
  )
  .addOption(configOption());
for (const { key } of SERVE_FLAGS) serveCommand.addOption(flagOption(key));
serveCommand
  .action(async (opts: Record<string, unknown>) => {
    let config: Config;
    try {
      config = configFrom(opts);
    } catch (e) {
      fail(e);
    }
    try {
      // Imported here so `serve` starts its workers before the HTTP layer loads (see server.ts).
      const { startServer } = await import('../server.js');
      const server = await startServer(config);
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        server.ctx.log.info({ signal }, 'shutting down');
        await server.close();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop('SIGINT'));
      process.on('SIGTERM', () => void stop('SIGTERM'));
    } catch (e) {
      fail(e);
    }
  });

const token = program.command('token').description('Manage API tokens stored (as hashes) in the data directory');
token
  .command('create')
  .description('Create a new API token, print it once, and store only its hash')
  .addOption(configOption())
  .addOption(dataDirOption())
  .option('--label <text>', 'a note to recognise the token by', 'created with stackd token create')
  .action((opts: Record<string, unknown>) => {
    try {
      const config = configFrom(opts);
      let db: ReturnType<typeof openDb>;
      try {
        db = openDb(config.dataDir);
      } catch (e) {
        throw new StartupError(`cannot open the data directory ${config.dataDir}: ${(e as Error).message}`);
      }
      const t = createStoredToken(db, String(opts.label));
      db.close();
      process.stdout.write(t + '\n');
      process.stderr.write('Store this token now: it is not shown again. Restart a running server to accept it.\n');
    } catch (e) {
      fail(e);
    }
  });

program
  .command('import')
  .description(
    'Load NDJSON (.ndjson/.jsonl, as durable import jobs) or RDF (.nt/.nq/.ttl/.trig) files into a running server (--url), ' +
      'or, with --data-dir and no --url, straight into a data directory no server is using. Shows a progress bar on a terminal, plain lines otherwise.',
  )
  .argument('<files...>', 'files to load, in order')
  .option('-u, --url <url>', 'base URL of a running server (e.g. http://127.0.0.1:8080); the token comes from --token or STACKD_TOKEN')
  .option('-t, --token <token>', 'API token for --url (default: STACKD_TOKEN)')
  .addOption(configOption())
  .addOption(dataDirOption())
  .addOption(new Option('-f, --format <format>', 'format of every file, instead of guessing from the extension').choices(['ndjson', 'ntriples', 'nquads', 'turtle', 'trig']))
  .option('--batch <n>', 'NDJSON records per commit (1-10000, default 10000)')
  .option('--strict', 'fail on the first malformed line or statement instead of skipping it', false)
  .option('--graph-uri <iri>', 'named graph for N-Triples / Turtle input')
  .option('--base-iri <iri>', 'base IRI for relative IRIs in Turtle / TriG')
  .action(async (files: string[], opts: Record<string, unknown>) => {
    const { runImport, ImportError } = await import('./import.js');
    try {
      const config = configFrom({ config: opts.config, dataDir: opts.dataDir });
      const url = (opts.url as string | undefined) ?? null;
      if (!url && !opts.dataDir && !config.configFile && !process.env.STACKD_DATA_DIR) {
        throw new ConfigError('say where to import: --url <running server> or --data-dir <directory> (offline)');
      }
      const batch = opts.batch === undefined ? null : Number(opts.batch);
      if (batch !== null && (!Number.isInteger(batch) || batch < 1 || batch > 10_000)) throw new ConfigError('--batch must be an integer from 1 to 10000');
      const lines = await runImport(files, {
        url: url ? url.replace(/\/+$/, '') : null,
        token: (opts.token as string | undefined) ?? process.env.STACKD_TOKEN ?? null,
        dataDir: url ? null : config.dataDir,
        format: (opts.format as FileKind | undefined) ?? null,
        batch,
        strict: !!opts.strict,
        graphUri: (opts.graphUri as string | undefined) ?? null,
        baseIri: (opts.baseIri as string | undefined) ?? null,
        iriBase: config.iriBase,
        maxRequestBytes: config.maxImportBytes,
      });
      for (const l of lines) process.stdout.write(l + '\n');
    } catch (e) {
      if (e instanceof ImportError) {
        process.stderr.write(`stackd import: ${e.message}\n`);
        process.exit(1);
      }
      fail(e);
    }
  });

await program.parseAsync(process.argv);
