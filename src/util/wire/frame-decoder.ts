// Incremental decoder of length-prefixed frames: [u32 BE payload length][payload].
//
// A frame that arrives whole inside one chunk is handed out as a view of that chunk (no copy);
// only a frame split across chunks is assembled, once, into a buffer of exactly its size, so a
// large frame never costs repeated concatenation. A length above the maximum is reported at
// once, as soon as its 4 header bytes are in, instead of buffering towards it: on a stream that
// is not speaking this protocol the "length" is garbage and usually huge.
//
// Views share memory with the socket's chunks; Node allocates a fresh buffer per read (sized to
// what was read), so holding a view is safe and pins at most that chunk.

export type FrameError =
  | { readonly kind: 'oversize'; readonly length: number; readonly max: number }
  /** The stream ended inside a frame (`buffered` bytes of it, header included, had arrived). */
  | { readonly kind: 'truncated'; readonly buffered: number };

export function describeFrameError(e: FrameError): string {
  return e.kind === 'oversize'
    ? `frame of ${e.length} bytes exceeds the limit of ${e.max}`
    : `stream ended inside a frame (${e.buffered} bytes buffered)`;
}

const HEADER = 4;

export class FrameDecoder {
  private readonly header = Buffer.alloc(HEADER);
  private headerFill = 0;
  private body: Buffer | undefined;
  private bodyFill = 0;
  private error: FrameError | undefined;

  constructor(private max: number) {
    if (!Number.isInteger(max) || max < 0) throw new RangeError(`bad max frame size: ${max}`);
  }

  /** The current size limit; can be raised after a handshake (small limit before it). */
  get maxFrameBytes(): number {
    return this.max;
  }

  set maxFrameBytes(max: number) {
    this.max = max;
  }

  /** The error that stopped this decoder, if any. After an error every push is ignored. */
  get failed(): FrameError | undefined {
    return this.error;
  }

  /** Bytes of an incomplete frame held (header included). */
  get buffered(): number {
    return this.body ? HEADER + this.bodyFill : this.headerFill;
  }

  /**
   * Feeds one chunk; calls `onFrame` synchronously for every complete frame, in order. Returns
   * the error if the stream is bad (then the rest is dropped and the decoder stays failed).
   * `onFrame` may throw; the decoder's state stays consistent for the frames already handed out.
   */
  push(chunk: Buffer, onFrame: (frame: Buffer) => void): FrameError | undefined {
    if (this.error) return this.error;
    let off = 0;
    const n = chunk.length;
    while (off < n) {
      if (this.body) {
        const take = Math.min(this.body.length - this.bodyFill, n - off);
        chunk.copy(this.body, this.bodyFill, off, off + take);
        this.bodyFill += take;
        off += take;
        if (this.bodyFill === this.body.length) {
          const frame = this.body;
          this.body = undefined;
          this.bodyFill = 0;
          onFrame(frame);
        }
        continue;
      }
      let length: number;
      if (this.headerFill === 0 && n - off >= HEADER) {
        length = chunk.readUInt32BE(off);
        off += HEADER;
      } else {
        const take = Math.min(HEADER - this.headerFill, n - off);
        chunk.copy(this.header, this.headerFill, off, off + take);
        this.headerFill += take;
        off += take;
        if (this.headerFill < HEADER) break;
        this.headerFill = 0;
        length = this.header.readUInt32BE(0);
      }
      if (length > this.max) {
        this.error = { kind: 'oversize', length, max: this.max };
        return this.error;
      }
      if (n - off >= length) {
        const frame = chunk.subarray(off, off + length);
        off += length;
        onFrame(frame);
      } else {
        this.body = Buffer.allocUnsafe(length);
        this.bodyFill = 0;
      }
    }
    return undefined;
  }

  /** Call at the end of the stream: reports a frame left incomplete. */
  finish(): FrameError | undefined {
    if (this.error) return this.error;
    if (this.buffered > 0) this.error = { kind: 'truncated', buffered: this.buffered };
    return this.error;
  }
}

/** Prepends the u32 BE length to a payload (a copy; encoders that can should build frames in place). */
export function frame(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(HEADER + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.set(payload, HEADER);
  return out;
}
