import { Command, Option } from 'commander';
import { loadConfig, ConfigError, type Config } from '../config/config.js';
import { startServer, StartupError } from '../server.js';
import { openDb } from '../store/db.js';
import { createStoredToken } from '../auth/tokens.js';
import { loadBuildInfo } from '../util/build-info.js';

/** Commander options → config keys (flags win over env and file). */
function flagsFrom(opts: Record<string, unknown>): Record<string, unknown> {
  const map: Record<string, string> = {
    host: 'host', port: 'port', dataDir: 'data_dir', graph: 'graph', branch: 'branch',
    queryTimeoutMs: 'query_timeout_ms', queryWorkers: 'query_workers', logLevel: 'log_level',
    tokenFile: 'token_file', maxImportBytes: 'max_import_bytes',
  };
  const out: Record<string, unknown> = {};
  for (const [k, key] of Object.entries(map)) if (opts[k] !== undefined) out[key] = opts[k];
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
const dataDirOption = () => new Option('-d, --data-dir <dir>', 'data directory (default ./data; also STACKD_DATA_DIR)');

program
  .command('serve')
  .description('Run the server. Precedence: flags > STACKD_* environment > TOML file > defaults. The token comes from STACKD_TOKEN, token_file, or is generated on first start.')
  .addOption(configOption())
  .addOption(new Option('-H, --host <addr>', 'address to bind (default 127.0.0.1; also STACKD_HOST)'))
  .addOption(new Option('-p, --port <n>', 'port; 0 picks a free one and the log says which (default 8080; also STACKD_PORT)'))
  .addOption(dataDirOption())
  .addOption(new Option('--token-file <file>', 'file whose first line is the API token (also STACKD_TOKEN_FILE)'))
  .addOption(new Option('--graph <name>', 'the graph this server serves (default main)'))
  .addOption(new Option('--branch <name>', 'the branch this server serves (default main)'))
  .addOption(new Option('--query-timeout-ms <ms>', 'cancel queries running longer than this (default 30000)'))
  .addOption(new Option('--query-workers <n>', 'head replicas answering queries in parallel, each a full copy in memory (default 1)'))
  .addOption(new Option('--max-import-bytes <n>', 'largest accepted import body (default 67108864)'))
  .addOption(new Option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (default info)'))
  .action(async (opts: Record<string, unknown>) => {
    let config: Config;
    try {
      config = configFrom(opts);
    } catch (e) {
      fail(e);
    }
    try {
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
      const db = openDb(config.dataDir);
      const t = createStoredToken(db, String(opts.label));
      db.close();
      process.stdout.write(t + '\n');
      process.stderr.write('Store this token now: it is not shown again. Restart a running server to accept it.\n');
    } catch (e) {
      fail(e);
    }
  });

await program.parseAsync(process.argv);
