// The table of applied client requests: (clientId, requestId) → the zxid it took effect at, the
// newest `window` of them, oldest forgotten first. Every write is looked up and inserted on every
// member, so the table's shape is what a write costs: keyed by one string per request
// (`${clientId}\0${requestId}`), a full table of 200,000 made `FindOrderedHashMapEntry` 9.7 % of the
// machine's samples under `bench node` (perf, five nodes), and each apply built and hashed a fresh
// key. Here a client is a small number, its requests are found by (number, number) in flat arrays
// (request-slots.ts), and a request above the highest its client ever had applied is known new
// without a lookup. Eviction and serialisation follow insertion order, kept in a ring, so they are
// the same on every replica as before.
import { RequestSlots } from './request-slots.js';
import type { Zxid } from '../../vocabulary/zxid.js';

interface ClientRequests {
  readonly clientId: string;
  /** Its number in the slots while it holds requests (reused once it holds none). */
  readonly index: number;
  /** UTF-8 length of `${clientId}\0`, the fixed part of its requests' keys in a snapshot. */
  readonly keyBase: number;
  /** The highest requestId of this client ever added (not lowered by eviction). */
  maxId: number;
  /** Its requests held. */
  held: number;
}

export class DoneTable {
  private readonly clients = new Map<string, ClientRequests>();
  private readonly slots = new RequestSlots();
  /** Client numbers free for reuse, and the next never used. */
  private readonly freeIndexes: number[] = [];
  private nextIndex = 0;
  // Insertion order: a ring of (client, requestId, zxid), `count` entries from `head`; capacity a
  // power of two, grown as needed up to the window.
  private ringClient: (ClientRequests | undefined)[] = new Array(16);
  private ringId: number[] = new Array(16).fill(0);
  private ringZxid: (Zxid | undefined)[] = new Array(16);
  private head = 0;
  private count = 0;
  /** UTF-8 bytes of all keys held, as a snapshot encodes them. */
  private keyBytesHeld = 0;

  constructor(private window: number) {}

  get size(): number {
    return this.count;
  }

  /** Bytes the held keys take in a snapshot (their UTF-8 alone, no record heads). */
  get keyBytes(): number {
    return this.keyBytesHeld;
  }

  get(clientId: string, requestId: number): Zxid | undefined {
    const c = this.clients.get(clientId);
    if (c === undefined || requestId > c.maxId) return undefined;
    return this.slots.get(c.index, requestId);
  }

  /**
   * The zxid `(clientId, requestId)` was applied at, if it is held; else remembers it at `zxid`
   * (forgetting the oldest beyond the window) and returns undefined. One lookup of the client for
   * both, as every apply needs both.
   */
  addOnce(clientId: string, requestId: number, zxid: Zxid): Zxid | undefined {
    let c = this.clients.get(clientId);
    if (c !== undefined && requestId <= c.maxId) {
      const earlier = this.slots.get(c.index, requestId);
      if (earlier !== undefined) return earlier;
    }
    if (this.window <= 0) return undefined;
    if (c === undefined) {
      const index = this.freeIndexes.pop() ?? this.nextIndex++;
      c = { clientId, index, keyBase: Buffer.byteLength(clientId, 'utf8') + 1, maxId: requestId, held: 0 };
      this.clients.set(clientId, c);
    }
    if (requestId > c.maxId) c.maxId = requestId;
    this.slots.add(c.index, requestId, zxid);
    c.held++;
    if (this.count === this.ringId.length) this.grow();
    const at = (this.head + this.count) & (this.ringId.length - 1);
    this.ringClient[at] = c;
    this.ringId[at] = requestId;
    this.ringZxid[at] = zxid;
    this.count++;
    this.keyBytesHeld += c.keyBase + decimalLength(requestId);
    while (this.count > this.window) this.evictOldest();
    return undefined;
  }

  /** Changes the window; a smaller one forgets the oldest at once. */
  setWindow(window: number): void {
    this.window = window;
    while (this.count > Math.max(window, 0)) this.evictOldest();
  }

  /** The held requests, oldest first, into parallel arrays (a snapshot's copy: no object per entry). */
  copyInto(clientIds: string[], requestIds: number[], zxids: Zxid[]): void {
    const mask = this.ringId.length - 1;
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) & mask;
      clientIds[i] = (this.ringClient[at] as ClientRequests).clientId;
      requestIds[i] = this.ringId[at] as number;
      zxids[i] = this.ringZxid[at] as Zxid;
    }
  }

  private evictOldest(): void {
    const at = this.head;
    const c = this.ringClient[at] as ClientRequests;
    const id = this.ringId[at] as number;
    this.ringClient[at] = undefined;
    this.ringZxid[at] = undefined;
    this.head = (this.head + 1) & (this.ringId.length - 1);
    this.count--;
    this.slots.delete(c.index, id);
    // A client with nothing held is dropped, so a long run's departed clients cost nothing; one
    // that comes back starts afresh (its requests above the old watermark were new then too).
    if (--c.held === 0) {
      this.clients.delete(c.clientId);
      this.freeIndexes.push(c.index);
    }
    this.keyBytesHeld -= c.keyBase + decimalLength(id);
  }

  private grow(): void {
    const old = this.ringId.length;
    const cap = old * 2;
    const client = new Array<ClientRequests | undefined>(cap);
    const id = new Array<number>(cap).fill(0);
    const zxid = new Array<Zxid | undefined>(cap);
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) & (old - 1);
      client[i] = this.ringClient[from];
      id[i] = this.ringId[from] as number;
      zxid[i] = this.ringZxid[from];
    }
    this.ringClient = client;
    this.ringId = id;
    this.ringZxid = zxid;
    this.head = 0;
  }
}

/** Characters in `${n}`, without making the string for the usual case (a safe integer). */
export function decimalLength(n: number): number {
  if (!Number.isSafeInteger(n)) return String(n).length;
  let len = n < 0 ? 2 : 1;
  let v = Math.abs(n);
  while (v >= 10) {
    v = Math.floor(v / 10);
    len++;
  }
  return len;
}
