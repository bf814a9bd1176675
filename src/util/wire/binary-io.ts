// Small cursor-based binary writer and reader shared by the peer codec and the client protocol.
// Big-endian integers, float64 for request ids, strings and byte strings prefixed by a u32 length.
// The writer can reserve room at the front for the frame's length prefix so a whole frame is
// built in one buffer, with no copy when it is handed to the socket.

/** Thrown when bytes do not decode: truncated, trailing garbage, out-of-range values. */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

const U32_MAX = 0xffff_ffff;

export class BinaryWriter {
  private buf: Buffer;
  private pos: number;
  private readonly start: number;

  /**
   * @param capacity initial size guess (the buffer grows by doubling when it is wrong)
   * @param framed reserve 4 bytes in front for a u32 BE length prefix, filled by `finishFrame`
   */
  constructor(capacity = 256, framed = false) {
    this.start = framed ? 4 : 0;
    this.buf = Buffer.allocUnsafe(Math.max(capacity + this.start, 16));
    this.pos = this.start;
  }

  private ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v;
    return this;
  }

  u32(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > U32_MAX) throw new RangeError(`not a u32: ${v}`);
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  f64(v: number): this {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
    return this;
  }

  /** u32 byte length, then UTF-8. Written in one pass: room for the worst case, length filled after. */
  str(s: string): this {
    this.ensure(4 + s.length * 3);
    const n = this.buf.write(s, this.pos + 4, 'utf8');
    this.buf.writeUInt32BE(n, this.pos);
    this.pos += 4 + n;
    return this;
  }

  /** u32 length, then the bytes. */
  bytes(b: Uint8Array): this {
    this.u32(b.length);
    return this.raw(b);
  }

  /** The bytes alone, no length (the reader must know where they end). */
  raw(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** Bytes written so far, excluding a reserved length prefix. */
  get length(): number {
    return this.pos - this.start;
  }

  /** The written bytes (a view, not a copy). */
  finish(): Buffer {
    return this.buf.subarray(this.start, this.pos);
  }

  /** The written bytes with the reserved u32 BE length prefix filled in. */
  finishFrame(): Buffer {
    if (this.start !== 4) throw new Error('writer was not created with framed=true');
    this.buf.writeUInt32BE(this.pos - 4, 0);
    return this.buf.subarray(0, this.pos);
  }
}

export class BinaryReader {
  private readonly buf: Buffer;
  private pos = 0;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) {
      throw new DecodeError(
        `truncated: need ${n} bytes at offset ${this.pos}, have ${this.buf.length - this.pos}`,
      );
    }
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  get offset(): number {
    return this.pos;
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++] as number;
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  str(): string {
    const n = this.u32();
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** A u32-length-prefixed byte string, as a view into the input (no copy). */
  bytes(): Uint8Array {
    return this.raw(this.u32());
  }

  /** `n` bytes as a plain Uint8Array view into the input (no copy). */
  raw(n: number): Uint8Array {
    this.need(n);
    const v = new Uint8Array(this.buf.buffer, this.buf.byteOffset + this.pos, n);
    this.pos += n;
    return v;
  }

  /** Everything left, as a Buffer view. */
  rest(): Buffer {
    const v = this.buf.subarray(this.pos);
    this.pos = this.buf.length;
    return v;
  }

  /** Asserts the input was consumed exactly: trailing bytes mean a malformed message. */
  end(): void {
    if (this.pos !== this.buf.length) {
      throw new DecodeError(`${this.buf.length - this.pos} trailing bytes at offset ${this.pos}`);
    }
  }
}
