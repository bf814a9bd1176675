// Heartbeats on the election links (paper, section 3.3): every node pings every peer periodically;
// the answer gives a round-trip sample, and both directions carry the sender's request rate θr (so
// every node keeps F_i) and its current score (so a leader can judge resignation).
import type { Score } from '../types.js';

export type HeartbeatMessage =
  | {
      readonly type: 'HEARTBEAT';
      readonly seq: number;
      /** Sender's clock when sent (ms); echoed back, so only the sender's clock is ever compared. */
      readonly sentAt: number;
      /** θr of the sender, requests/s. */
      readonly rate: number;
      /** The sender's score with nobody excluded (empty when it has none). */
      readonly score: Score;
    }
  | {
      readonly type: 'HEARTBEAT_ACK';
      readonly seq: number;
      /** The HEARTBEAT's sentAt, echoed. */
      readonly sentAt: number;
      readonly rate: number;
      readonly score: Score;
    };
