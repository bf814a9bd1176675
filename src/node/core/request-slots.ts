// A hash table of (client number, requestId) → zxid in flat typed arrays, open addressing with
// linear probing: a lookup reads one or two neighbouring slots, where a Map of 625 numbers per
// client (done-table.ts before) read its bucket, then its entry, and rehashed into a fresh backing
// store every few hundred inserts as evictions left it holes: under `bench node` the tree's apply
// was still 8.4 % of the machine's samples, two thirds of them in Map lookups and sets (perf).
// Deletion shifts the entries after the hole back (no tombstones), so a table that has seen
// millions of requests probes as one freshly filled.
import type { Zxid } from '../../vocabulary/zxid.js';

const EMPTY = -1;
/** Grown (doubled) before more than half its slots are full: probes stay short. */
const MAX_LOAD = 0.5;
const MIN_BITS = 6;

export class RequestSlots {
  private bits = MIN_BITS;
  private client = new Int32Array(1 << MIN_BITS).fill(EMPTY);
  private id = new Float64Array(1 << MIN_BITS);
  private zxid: (Zxid | undefined)[] = new Array<Zxid | undefined>(1 << MIN_BITS);
  private held = 0;

  get size(): number {
    return this.held;
  }

  get(client: number, id: number): Zxid | undefined {
    const at = this.find(client, id);
    return at < 0 ? undefined : this.zxid[at];
  }

  /** Adds a key not held (the caller knows it is not). */
  add(client: number, id: number, zxid: Zxid): void {
    if (this.held + 1 > MAX_LOAD * this.client.length) this.resize(this.bits + 1);
    const mask = this.client.length - 1;
    let at = this.home(client, id);
    while (this.client[at] !== EMPTY) at = (at + 1) & mask;
    this.client[at] = client;
    this.id[at] = id;
    this.zxid[at] = zxid;
    this.held++;
  }

  /** Removes a key; false if it was not held. */
  delete(client: number, id: number): boolean {
    let hole = this.find(client, id);
    if (hole < 0) return false;
    const mask = this.client.length - 1;
    // Backward shift: every entry after the hole, up to the next empty slot, whose home is not
    // between the hole and itself moves into the hole, so no probe ever stops short of its key.
    for (let at = (hole + 1) & mask; this.client[at] !== EMPTY; at = (at + 1) & mask) {
      const home = this.home(this.client[at] as number, this.id[at] as number);
      const stays = hole <= at ? hole < home && home <= at : hole < home || home <= at;
      if (stays) continue;
      this.client[hole] = this.client[at] as number;
      this.id[hole] = this.id[at] as number;
      this.zxid[hole] = this.zxid[at];
      hole = at;
    }
    this.client[hole] = EMPTY;
    this.zxid[hole] = undefined;
    this.held--;
    return true;
  }

  /** The slot holding the key, or -1. */
  private find(client: number, id: number): number {
    const mask = this.client.length - 1;
    for (let at = this.home(client, id); ; at = (at + 1) & mask) {
      const c = this.client[at] as number;
      if (c === EMPTY) return -1;
      if (c === client && this.id[at] === id) return at;
    }
  }

  /** Fibonacci hashing of the client and both halves of the id (ids are numbers up to 2^53). */
  private home(client: number, id: number): number {
    const mixed = (id | 0) ^ Math.imul((id / 4294967296) | 0, 0x85ebca6b) ^ Math.imul(client, 0x27d4eb2d);
    return Math.imul(mixed, 0x9e3779b1) >>> (32 - this.bits);
  }

  private resize(bits: number): void {
    const { client, id, zxid } = this;
    this.bits = bits;
    this.client = new Int32Array(1 << bits).fill(EMPTY);
    this.id = new Float64Array(1 << bits);
    this.zxid = new Array<Zxid | undefined>(1 << bits);
    this.held = 0;
    for (let at = 0; at < client.length; at++) {
      if (client[at] !== EMPTY) this.add(client[at] as number, id[at] as number, zxid[at] as Zxid);
    }
  }
}
