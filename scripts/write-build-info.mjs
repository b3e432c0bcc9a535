// Writes dist/build-info.json: package version, git commit and build time for GET /version.
import { execSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
let commit = process.env.STACKD_GIT_COMMIT || 'unknown';
if (commit === 'unknown') {
  try {
    commit = execSync('git rev-parse HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    /* not a git checkout (e.g. a Docker build context without .git) */
  }
}
mkdirSync(new URL('../dist/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../dist/build-info.json', import.meta.url),
  JSON.stringify({ version: pkg.version, git_commit: commit, built_at: new Date().toISOString() }, null, 2) + '\n',
);
