// A Zab transaction id: (epoch, counter). Kept as two numbers rather than one 64-bit JS number,
// which would silently lose precision past 2^53. The shape is shared (vocabulary/names.ts); its
// arithmetic is here.
import type { Zxid } from './names.js';

export type { Zxid };

export const ZERO_ZXID: Zxid = Object.freeze({ epoch: 0, counter: 0 });

export function zxid(epoch: number, counter: number): Zxid {
  return { epoch, counter };
}

/** Negative when a < b, zero when equal, positive when a > b. */
export function compareZxid(a: Zxid, b: Zxid): number {
  return a.epoch !== b.epoch ? a.epoch - b.epoch : a.counter - b.counter;
}

export function zxidEquals(a: Zxid, b: Zxid): boolean {
  return a.epoch === b.epoch && a.counter === b.counter;
}

export function maxZxid(a: Zxid, b: Zxid): Zxid {
  return compareZxid(a, b) >= 0 ? a : b;
}

/** "epoch:counter", the form used in events, logs and the status page. */
export function formatZxid(z: Zxid): string {
  return `${z.epoch}:${z.counter}`;
}

export function parseZxid(text: string): Zxid {
  const m = /^(\d+):(\d+)$/.exec(text);
  if (!m) throw new Error(`not a zxid: ${JSON.stringify(text)}`);
  return { epoch: Number(m[1]), counter: Number(m[2]) };
}
