// The models a key's operations are checked against: a register (read, write) and a
// compare-and-set register (read, write, cas [old, new]), both starting at null. A model says what
// state an operation leaves, or that it cannot happen in the state it finds.
import type { RegisterValue } from '../vocabulary/history.js';
import type { Op } from './history-ops.js';

export interface Model<S> {
  readonly name: ModelName;
  readonly init: S;
  /** The state after `op`, or undefined where `op` cannot happen in `state` (a read of another value). */
  step(state: S, op: Op): S | undefined;
  /**
   * The state as a string for the search's cache, over these operations: two states with the same
   * id are states no operation among them can tell apart (the same state, or, for a register,
   * two values none of them reads or expects).
   */
  idsOver(ops: readonly Op[]): (state: S) => string;
}

export const MODEL_NAMES = ['register', 'cas-register'] as const;
export type ModelName = (typeof MODEL_NAMES)[number];

/** null and strings apart: "null" the string is not the register's null. */
const idOf = (v: RegisterValue): string => (v === null ? '\u0000' : `=${v}`);

/**
 * Ids under which every value no operation reads or expects is one state: such a value can only
 * be written over (a read of anything else fails on it), so which of them the register holds
 * changes nothing after. Without this, every order of writes nobody read is a state of its own,
 * and the search tries them all.
 */
function registerIdsOver(ops: readonly Op[]): (v: RegisterValue) => string {
  const told = new Set<RegisterValue>([null]);
  for (const o of ops)
    if (o.f === 'read') told.add(o.output);
    else if (o.f === 'cas') told.add((o.input as readonly [RegisterValue, RegisterValue])[0]);
  return (v) => (told.has(v) ? idOf(v) : '\u0001');
}

function stepRegister(state: RegisterValue, op: Op, cas: boolean): RegisterValue | undefined {
  if (op.f === 'read') return op.output === state ? state : undefined;
  if (op.f === 'write') return op.input as RegisterValue;
  if (!cas) return undefined;
  const [from, to] = op.input as readonly [RegisterValue, RegisterValue];
  return state === from ? to : undefined;
}

export const REGISTER: Model<RegisterValue> = {
  name: 'register',
  init: null,
  step: (s, op) => stepRegister(s, op, false),
  idsOver: registerIdsOver,
};

export const CAS_REGISTER: Model<RegisterValue> = {
  name: 'cas-register',
  init: null,
  step: (s, op) => stepRegister(s, op, true),
  idsOver: registerIdsOver,
};

export function modelNamed(name: ModelName): Model<RegisterValue> {
  return name === 'register' ? REGISTER : CAS_REGISTER;
}
