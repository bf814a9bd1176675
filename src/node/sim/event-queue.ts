// A min-heap of timed events; equal times pop in insertion order, which keeps each simulated
// link FIFO and makes a run depend only on its seed.
interface Entry<T> {
  readonly time: number;
  readonly seq: number;
  readonly item: T;
}

export class EventQueue<T> {
  private readonly heap: Entry<T>[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(time: number, item: T): void {
    const h = this.heap;
    h.push({ time, seq: this.seq++, item });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  pop(): { time: number; item: T } | undefined {
    const h = this.heap;
    const top = h[0];
    if (!top) return undefined;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return { time: top.time, item: top.item };
  }

  private less(a: Entry<T>, b: Entry<T>): boolean {
    return a.time < b.time || (a.time === b.time && a.seq < b.seq);
  }
}
