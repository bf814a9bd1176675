// Jute, ZooKeeper's record serialisation, for the few records the harness's client uses: big-endian
// int (4 bytes) and long (8), a one-byte boolean, and buffers, strings and vectors prefixed by an
// int length (-1 for null). Longs are zxids and session ids, both 64-bit: they are carried as
// bigint so that no bit is lost (a zxid's epoch is its high 32 bits).
import { DecodeError } from '../../../util/wire/binary-io.js';

export { DecodeError };

export class JuteWriter {
  private buf: Buffer;
  private pos = 4; // room for the frame's length prefix

  constructor(capacity = 128) {
    this.buf = Buffer.allocUnsafe(capacity + 4);
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  int(v: number): this {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  long(v: bigint): this {
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
    return this;
  }

  bool(v: boolean): this {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
    return this;
  }

  buffer(b: Uint8Array | null): this {
    if (b === null) return this.int(-1);
    this.int(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  ustring(s: string | null): this {
    if (s === null) return this.int(-1);
    const n = Buffer.byteLength(s);
    this.int(n);
    this.ensure(n);
    this.buf.write(s, this.pos, 'utf8');
    this.pos += n;
    return this;
  }

  /** The frame: int length of the record, then the record. */
  frame(): Buffer {
    this.buf.writeInt32BE(this.pos - 4, 0);
    return this.buf.subarray(0, this.pos);
  }
}

export class JuteReader {
  private pos = 0;

  constructor(private readonly buf: Buffer) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length)
      throw new DecodeError(`record truncated: need ${n} bytes at ${this.pos} of ${this.buf.length}`);
  }

  int(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  long(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  bool(): boolean {
    this.need(1);
    return this.buf[this.pos++] !== 0;
  }

  buffer(): Buffer | null {
    const n = this.int();
    if (n === -1) return null;
    if (n < 0) throw new DecodeError(`negative buffer length ${n}`);
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  ustring(): string | null {
    const b = this.buffer();
    return b === null ? null : b.toString('utf8');
  }

  /** Bytes not read yet (an optional trailing field is present when this is > 0). */
  get remaining(): number {
    return this.buf.length - this.pos;
  }
}
