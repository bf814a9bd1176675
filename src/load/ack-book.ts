// The acknowledged writes of one agent, for the harness's checker: (seq, zxid) in acknowledgement
// order, packed into typed arrays. A run at 5,000 writes/s acknowledges hundreds of thousands of
// writes; as small JS arrays they would all survive into the old generation and lengthen every
// garbage collection, and a collection pause is a pause of the send loop.
export class AckBook {
  private seqs = new Float64Array(4096);
  private epochs = new Uint32Array(4096);
  private counters = new Uint32Array(4096);
  private n = 0;

  get size(): number {
    return this.n;
  }

  add(seq: number, epoch: number, counter: number): void {
    if (this.n === this.seqs.length) this.grow();
    this.seqs[this.n] = seq;
    this.epochs[this.n] = epoch;
    this.counters[this.n] = counter;
    this.n += 1;
  }

  /** Every entry as [path, epoch, counter], the path made from the seq by `pathOf`. */
  toList(pathOf: (seq: number) => string): Array<[string, number, number]> {
    const out = new Array<[string, number, number]>(this.n);
    for (let i = 0; i < this.n; i++) out[i] = [pathOf(this.seqs[i]!), this.epochs[i]!, this.counters[i]!];
    return out;
  }

  private grow(): void {
    const size = this.seqs.length * 2;
    const seqs = new Float64Array(size);
    seqs.set(this.seqs);
    const epochs = new Uint32Array(size);
    epochs.set(this.epochs);
    const counters = new Uint32Array(size);
    counters.set(this.counters);
    this.seqs = seqs;
    this.epochs = epochs;
    this.counters = counters;
  }
}
