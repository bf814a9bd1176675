// Batches the frames written to one socket during one turn of the event loop into a single
// socket write. A leader sends thousands of small frames per second (ACK-sized COMMITs, PINGs,
// client replies); one write per frame would cost a syscall and a stream request each.
//
// Frames queued while the loop runs I/O callbacks are flushed in the same loop iteration's
// check phase (setImmediate), so the added latency is microseconds. Small batches are
// concatenated (one memcpy, one write); big ones go out corked as a writev without copying.
import type { Socket } from 'node:net';

/** Batches at least this big are written corked (writev) instead of being concatenated. */
const CONCAT_LIMIT = 256 * 1024;

export class CoalescingWriter {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private scheduled = false;
  private stopped = false;
  /** Bytes and frames handed to the socket so far. */
  bytesOut = 0;
  framesOut = 0;

  constructor(private readonly socket: Socket) {}

  /** Queues one complete frame. Ignored once the writer is stopped or the socket is gone. */
  write(frame: Buffer): void {
    if (this.stopped) return;
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    this.framesOut++;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushNow);
    }
  }

  /** Bytes not yet accepted by the kernel: queued here plus buffered in the socket. */
  get pendingBytes(): number {
    return this.queuedBytes + this.socket.writableLength;
  }

  /** Writes everything queued now. */
  flush(): void {
    this.scheduled = false;
    const q = this.queue;
    if (q.length === 0 || this.stopped) return;
    const total = this.queuedBytes;
    this.queue = [];
    this.queuedBytes = 0;
    if (this.socket.destroyed || !this.socket.writable) return;
    this.bytesOut += total;
    if (q.length === 1) {
      this.socket.write(q[0] as Buffer);
    } else if (total < CONCAT_LIMIT) {
      this.socket.write(Buffer.concat(q, total));
    } else {
      this.socket.cork();
      for (const b of q) this.socket.write(b);
      this.socket.uncork();
    }
  }

  /** Flushes, then half-closes the socket (FIN after the data). */
  end(): void {
    this.flush();
    this.stopped = true;
    if (!this.socket.destroyed) this.socket.end();
  }

  /** Drops whatever is queued and accepts nothing more (the socket is being torn down). */
  stop(): void {
    this.stopped = true;
    this.queue = [];
    this.queuedBytes = 0;
  }

  private readonly flushNow = (): void => this.flush();
}
