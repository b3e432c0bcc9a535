import type { DB } from './db.js';
import { ReplicaLink, type LinkReply } from './replica-link.js';
import type { HeadWriteMessage } from './head-protocol.js';
import { quadLine } from '../model/rdf-terms.js';

/** Queued delta text past which the outbox is posted without waiting for the write to end. */
const OUTBOX_FLUSH_CHARS = 256 * 1024;

export class WriteFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    /** Whether the same request can succeed later; by default server-side (5xx) failures can. */
    readonly retryable: boolean = status >= 500,
  ) {
    super(message);
  }
}

interface Row {
  s: string;
  p: string;
  o: string;
  g: string;
  bn: number;
}

/**
 * Owns the write side of both stores: the SQLite transaction and the head replicas'
 * open write. A write is: begin → statements inserted in SQLite and streamed to every
 * replica → every replica confirms → SQLite COMMIT (fsync) → replicas make it visible.
 * Any failure before COMMIT undoes the replicas from the rows of the open transaction.
 */
export class WriteCoordinator {
  readonly replicas = new Map<number, ReplicaLink>();
  private openSeq: number | null = null;
  /** A dry run writes inside the SQLite transaction, tells no replica, and always rolls back. */
  private dry = false;
  private readonly lastSeqStmt;
  /**
   * Messages for the replicas not yet posted. Small writes post one message per replica
   * (begin, loads and prepare together) instead of one per step: postMessage and its
   * structured clone cost more than applying a one-triple delta.
   */
  private outbox: HeadWriteMessage[] = [];
  private outboxChars = 0;
  /** Asks for the WAL to be folded into the database file, off this thread (set by the writer). */
  requestCheckpoint: () => void = () => undefined;

  constructor(
    readonly db: DB,
    private readonly onReplicaLost: (id: number, message: string) => void,
  ) {
    this.lastSeqStmt = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM commits');
  }

  headSeq(): number {
    return (this.lastSeqStmt.get() as { seq: number }).seq;
  }

  addReplica(link: ReplicaLink) {
    this.replicas.set(link.id, link);
  }

  makeLink(id: number, port: import('node:worker_threads').MessagePort): ReplicaLink {
    return new ReplicaLink(id, port, (l) => {
      this.replicas.delete(l.id);
      this.onReplicaLost(l.id, 'replica lost');
    });
  }

  /** Starts a write; returns its commit_seq (for a dry run: the seq it would get). */
  begin(opts: { dryRun?: boolean } = {}): number {
    if (this.openSeq !== null) throw new Error('a write is already open');
    this.db.exec('BEGIN IMMEDIATE');
    const seq = this.headSeq() + 1;
    this.openSeq = seq;
    this.dry = !!opts.dryRun;
    if (!this.dry) this.post({ op: 'begin', seq });
    return seq;
  }

  get isDryRun(): boolean {
    return this.dry;
  }

  /** Streams statements already inserted in SQLite to the replicas. */
  load(text: string, bnText: string) {
    if (this.dry || (!text && !bnText)) return;
    this.post({ op: 'load', text, bnText });
  }

  /** Streams statements already marked removed in SQLite to the replicas. */
  unload(text: string, bnText: string) {
    if (this.dry || (!text && !bnText)) return;
    this.post({ op: 'unload', text, bnText });
  }

  /** Empties the replicas' stores within the open write (graph delete). */
  clear() {
    if (this.dry) return;
    this.post({ op: 'clear' });
  }

  /** Sends the rows a statement selects to the replicas, as loads or unloads, in chunks. */
  private replay(sql: string, seq: number, op: 'load' | 'unload') {
    let text: string[] = [];
    let bnText: string[] = [];
    const flush = () => {
      if (text.length || bnText.length) this.post({ op, text: text.join('\n'), bnText: bnText.join('\n') });
      text = [];
      bnText = [];
    };
    for (const row of this.db.prepare(sql).iterate({ seq }) as IterableIterator<Row>) {
      (row.bn ? bnText : text).push(quadLine(row));
      if (text.length + bnText.length >= 2000) flush();
    }
    flush();
  }

  /**
   * Takes one commit of an open group back out of the replicas (before its savepoint is
   * rolled back): unload what it added, reload what it removed.
   */
  undoSeq(seq: number) {
    if (this.dry) return;
    this.replay('SELECT s, p, o, g, bn FROM quads WHERE added_seq = @seq', seq, 'unload');
    this.replay('SELECT s, p, o, g, bn FROM quads WHERE removed_seq = @seq AND added_seq <> removed_seq', seq, 'load');
  }

  /** Undoes the open write (all its commits) everywhere. Safe to call at any point before COMMIT. */
  async abort(): Promise<void> {
    const seq = this.openSeq;
    if (seq === null) return;
    const dry = this.dry;
    try {
      if (!dry) {
        // Take out what this write added, then put back what it removed (a group spans seq..head).
        this.replay('SELECT s, p, o, g, bn FROM quads WHERE added_seq >= @seq', seq, 'unload');
        this.replay('SELECT s, p, o, g, bn FROM quads WHERE removed_seq >= @seq AND added_seq < @seq', seq, 'load');
      }
    } finally {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.openSeq = null;
      this.dry = false;
    }
    if (!dry) await this.requestAll({ op: 'abort', seq });
  }

  /**
   * Every replica confirms the delta, then SQLite commits, then the write becomes visible.
   * A replica that refuses the delta aborts the write with a typed error.
   */
  async commit(): Promise<number> {
    const seq = this.openSeq;
    if (seq === null) throw new Error('no open write');
    if (this.dry) throw new Error('a dry run cannot commit');
    const prepared = await this.requestAll({ op: 'prepare', seq });
    const broke = prepared.find((p) => p.op === 'failed' && p.fatal);
    if (broke && broke.op === 'failed') {
      // The delta did not fit in a replica (its engine ran out of memory): the write must not
      // become durable, or every rebuild from SQLite would fail the same way.
      await this.abort();
      throw new WriteFailure(507, 'store_capacity_exceeded',
        `this write does not fit in the head store (${broke.message}); nothing was written. ` +
        'The store keeps the current state in memory, up to about 4 GiB per replica: delete data or split the dataset across servers', null, false);
    }
    const refused = prepared.find((p) => p.op === 'failed');
    if (refused && refused.op === 'failed') {
      await this.abort();
      throw new WriteFailure(400, 'rdf_rejected', `the RDF engine refused a statement: ${refused.message}`);
    }
    try {
      this.db.exec('COMMIT');
    } catch (e) {
      // Nothing durable happened. Undo the replicas from the rows still readable; if SQLite
      // already rolled the transaction back, the replicas are rebuilt from durable state.
      if (this.db.inTransaction) await this.abort().catch(() => undefined);
      else {
        this.openSeq = null;
        for (const r of [...this.replicas.values()]) r.markLost(`resync after failed commit: ${(e as Error).message}`);
      }
      throw e;
    }
    this.openSeq = null;
    // A group of commits ends at the last one written.
    const last = Math.max(seq, this.headSeq());
    this.post({ op: 'commit', seq: last });
    this.flushOutbox(); // now: queries wait for this message
    return last;
  }

  /** Ends a write that changed no statement (e.g. only an idempotency record). */
  async commitWithoutDelta(): Promise<void> {
    const seq = this.openSeq;
    if (seq === null) throw new Error('no open write');
    if (this.dry) throw new Error('a dry run cannot commit');
    this.db.exec('COMMIT');
    this.openSeq = null;
    await this.requestAll({ op: 'abort', seq });
  }

  /** Queues a message for every replica; large deltas go out at once so replicas load while SQLite writes. */
  private post(msg: HeadWriteMessage) {
    this.outbox.push(msg);
    if ('text' in msg) this.outboxChars += msg.text.length + msg.bnText.length;
    if (this.outboxChars >= OUTBOX_FLUSH_CHARS) this.flushOutbox();
  }

  private flushOutbox() {
    if (this.outbox.length === 0) return;
    const msg: HeadWriteMessage = this.outbox.length === 1 ? this.outbox[0]! : { op: 'batch', msgs: this.outbox };
    this.outbox = [];
    this.outboxChars = 0;
    for (const r of this.replicas.values()) r.send(msg);
  }

  /** Sends the queued messages and `msg` (which gets one reply) to every replica, and waits. */
  private requestAll(msg: HeadWriteMessage): Promise<LinkReply[]> {
    const queued = this.outbox;
    this.outbox = [];
    this.outboxChars = 0;
    const out: HeadWriteMessage = queued.length === 0 ? msg : { op: 'batch', msgs: [...queued, msg] };
    return Promise.all([...this.replicas.values()].map((r) => r.request(out)));
  }

  get isOpen(): boolean {
    return this.openSeq !== null;
  }
}
