// Heartbeats on the election links (paper, section 3.3). Each node sends one HEARTBEAT per period
// to every peer; instead of answering each one (a ping-pong would double the messages), a
// heartbeat echoes the last one received from that peer and how long it was held, so the peer
// takes RTT = now − echo.sentAt − echo.heldMs using only its own clock. Heartbeats also carry the
// sender's request rate θr (so every node keeps F_i) and its current score (for resignation).
import type { Score } from '../types.js';

export interface HeartbeatMessage {
  readonly type: 'HEARTBEAT';
  readonly seq: number;
  /** Sender's clock when sent (ms); only ever compared with the sender's own clock. */
  readonly sentAt: number;
  /** θr of the sender, requests/s. */
  readonly rate: number;
  /** The sender's score with nobody excluded (empty when it has none to offer). */
  readonly score: Score;
  /** The receiver's previous heartbeat, echoed: its sentAt and how long the sender held it. */
  readonly echo?: { readonly sentAt: number; readonly heldMs: number };
}
