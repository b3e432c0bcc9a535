import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStackd, importRdf, countTriples, removeDir } from './helpers/server.js';

test('start, load, query, restart: the data is still there', async () => {
  const s = await startStackd();
  try {
    const res = await importRdf(s, '<http://e/a> <http://e/p> "x" .\n<http://e/a> <http://e/p> <http://e/b> .\n');
    assert.equal(res.status, 200);
    const body = (await res.json()) as { imported_triplets: number; committed_commit_seq: number };
    assert.equal(body.imported_triplets, 2);
    assert.equal(body.committed_commit_seq, 1);
    assert.equal(await countTriples(s), 2);
  } finally {
    await s.stop();
  }
  const again = await startStackd({ dataDir: s.dataDir });
  try {
    assert.equal(await countTriples(again), 2);
  } finally {
    await again.stop();
    removeDir(s.dataDir);
  }
});
