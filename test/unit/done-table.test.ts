// The table of applied requests against the simplest table with the same rules (one Map keyed by
// `${clientId}\0${requestId}`, insertion-ordered, oldest forgotten first: what the tree held
// before), over seeded random histories of retries, forgotten requests, departing clients and ids of
// every shape; and its hash slots under heavy deletion, where a wrong backward shift loses keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DoneTable } from '../../src/node/core/done-table.js';
import { RequestSlots } from '../../src/node/core/request-slots.js';
import { zxid, type Zxid } from '../../src/vocabulary/zxid.js';
import { Random } from '../../src/util/random.js';

class ReferenceTable {
  readonly done = new Map<string, Zxid>();
  constructor(private readonly window: number) {}
  addOnce(clientId: string, requestId: number, z: Zxid): Zxid | undefined {
    const key = `${clientId}\u0000${requestId}`;
    const earlier = this.done.get(key);
    if (earlier) return earlier;
    if (this.window <= 0) return undefined;
    this.done.set(key, z);
    if (this.done.size > this.window) this.done.delete(this.done.keys().next().value as string);
    return undefined;
  }
}

const CLIENTS = ['c', 'bench-3-17', 'é-ü', 'a\u0000b', ''];
const ODD_IDS = [0, -1, -12, 2 ** 32, 2 ** 32 + 1, -(2 ** 32), 9_007_199_254_740_991, 1.5];

for (const window of [0, 1, 3, 50, 1_000]) {
  test(`a window of ${window}: the same answers and order as one Map of string keys`, () => {
    for (const seed of [1, 2, 3]) {
      const rnd = new Random(seed * 7919 + window);
      const table = new DoneTable(window);
      const ref = new ReferenceTable(window);
      const next = new Map<string, number>();
      for (let i = 1; i <= 20_000; i++) {
        const clientId = rnd.pick(CLIENTS);
        const top = next.get(clientId) ?? 1;
        let requestId: number;
        const r = rnd.next();
        if (r < 0.7)
          next.set(clientId, (requestId = top) + 1); // a new request
        else if (r < 0.9)
          requestId = Math.max(1, top - rnd.int(1, 60)); // a retry, maybe forgotten
        else requestId = rnd.chance(0.5) ? rnd.pick(ODD_IDS) : rnd.int(1, 3 * top);
        const z = zxid(1, i);
        assert.deepEqual(
          table.addOnce(clientId, requestId, z),
          ref.addOnce(clientId, requestId, z),
          `seed ${seed}, op ${i}: ${JSON.stringify(clientId)} ${requestId}`,
        );
        if (i % 997 === 0 || i === 20_000) {
          const ids: string[] = [];
          const reqs: number[] = [];
          const zs: Zxid[] = [];
          table.copyInto(ids, reqs, zs);
          assert.deepEqual(
            ids.map((c, k) => [`${c}\u0000${reqs[k]}`, zs[k]]),
            [...ref.done.entries()],
            `seed ${seed}, order at op ${i}`,
          );
          const keyBytes = [...ref.done.keys()].reduce((n, k) => n + Buffer.byteLength(k, 'utf8'), 0);
          assert.equal(table.size, ref.done.size);
          assert.equal(table.keyBytes, keyBytes);
        }
      }
    }
  });
}

test('hash slots under churn: every key held is found, every key deleted is not', () => {
  const rnd = new Random(42);
  const slots = new RequestSlots();
  const held = new Map<string, { c: number; id: number; z: Zxid }>();
  for (let i = 0; i < 60_000; i++) {
    if (held.size > 0 && rnd.chance(held.size > 3_000 ? 0.6 : 0.35)) {
      const keys = [...held.keys()];
      const k = keys[rnd.int(0, Math.min(keys.length - 1, 50))] as string; // mostly the oldest
      const e = held.get(k)!;
      assert.equal(slots.delete(e.c, e.id), true);
      assert.equal(slots.delete(e.c, e.id), false, 'deleted twice');
      held.delete(k);
    } else {
      const c = rnd.int(0, 40);
      const id = rnd.chance(0.9) ? rnd.int(1, 5_000) : rnd.pick(ODD_IDS);
      const k = `${c}/${id}`;
      if (held.has(k)) continue;
      const z = zxid(2, i);
      slots.add(c, id, z);
      held.set(k, { c, id, z });
    }
    if (i % 5_000 === 0) {
      assert.equal(slots.size, held.size);
      for (const { c, id, z } of held.values()) assert.equal(slots.get(c, id), z, `${c}/${id} lost`);
    }
  }
  for (const { c, id, z } of held.values()) assert.equal(slots.get(c, id), z);
  assert.equal(slots.get(41, 1), undefined);
});
