import type { MessagePort } from 'node:worker_threads';
import type { HeadWriteMessage, HeadWriteReply } from './head-protocol.js';

export type LinkReply = HeadWriteReply | { op: 'lost'; message: string };

/** The writer's end of one head replica's write port: send, and await replies in order. */
export class ReplicaLink {
  private waiters: ((r: LinkReply) => void)[] = [];
  lost = false;

  constructor(
    readonly id: number,
    private readonly port: MessagePort,
    private readonly onLost: (link: ReplicaLink) => void,
  ) {
    port.on('message', (r: HeadWriteReply) => {
      const w = this.waiters.shift();
      if (w) w(r);
    });
    port.on('close', () => this.markLost('replica closed'));
  }

  markLost(message: string) {
    if (this.lost) return;
    this.lost = true;
    for (const w of this.waiters.splice(0)) w({ op: 'lost', message });
    this.onLost(this);
  }

  send(msg: HeadWriteMessage) {
    if (!this.lost) this.port.postMessage(msg);
  }

  /** Sends a message that gets exactly one reply, and waits for it. */
  request(msg: HeadWriteMessage): Promise<LinkReply> {
    if (this.lost) return Promise.resolve({ op: 'lost', message: 'replica lost' });
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.port.postMessage(msg);
    });
  }

  close() {
    this.port.close();
  }
}
