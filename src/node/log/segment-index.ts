// In-memory index of one log segment: the zxid and byte offset of every record it holds, so that
// truncating the log is a lookup plus an ftruncate rather than a re-read. Typed arrays keep it at
// 12 bytes per record (a million records ≈ 12 MB).
import type { Zxid } from '../../vocabulary/zxid.js';
import { compareZxid } from '../../vocabulary/zxid.js';

export class SegmentIndex {
  /** Bytes of records in the segment (the offset the next record goes to). */
  size = 0;
  private n = 0;
  private epochs = new Uint32Array(16);
  private counters = new Uint32Array(16);
  private offsets = new Float64Array(16);

  constructor(readonly seq: number) {}

  get count(): number {
    return this.n;
  }

  /** Record a record of `size` bytes at the current end of the segment. */
  push(zxid: Zxid, size: number): void {
    if (this.n === this.epochs.length) this.grow();
    this.epochs[this.n] = zxid.epoch;
    this.counters[this.n] = zxid.counter;
    this.offsets[this.n] = this.size;
    this.n++;
    this.size += size;
  }

  zxidAt(i: number): Zxid {
    return { epoch: this.epochs[i]!, counter: this.counters[i]! };
  }

  offsetAt(i: number): number {
    return this.offsets[i]!;
  }

  lastZxid(): Zxid | undefined {
    return this.n === 0 ? undefined : this.zxidAt(this.n - 1);
  }

  /** Index of the first record with zxid > `z`, or `count` if there is none (records are in zxid order). */
  firstAfter(z: Zxid): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareZxid(this.zxidAt(mid), z) > 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Keep only the first `keep` records; returns the new size in bytes. */
  cut(keep: number): number {
    if (keep < this.n) {
      this.size = this.offsets[keep]!;
      this.n = keep;
    }
    return this.size;
  }

  private grow(): void {
    const cap = this.epochs.length * 2;
    const e = new Uint32Array(cap);
    e.set(this.epochs);
    const c = new Uint32Array(cap);
    c.set(this.counters);
    const o = new Float64Array(cap);
    o.set(this.offsets);
    this.epochs = e;
    this.counters = c;
    this.offsets = o;
  }
}
