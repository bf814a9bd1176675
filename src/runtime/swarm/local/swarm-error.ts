// A failure of the local swarm's machinery: the machine's Docker, a host's engine, the swarm, an
// image load (exit 3), or something the user must change first (exit 2). Carries the last lines of
// what failed (a docker command's output, a host engine's log) for the diagnosis.
export class SwarmError extends Error {
  override readonly name = 'SwarmError';
  constructor(
    message: string,
    readonly exitCode: 2 | 3,
    readonly tail: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * The caller's AbortSignal fired while `swarm up` worked (Ctrl-C, SIGTERM, the parent gone, the
 * deadline: the command's RunGuard says which): what it made is removed.
 */
export class SwarmInterrupted extends Error {
  override readonly name = 'SwarmInterrupted';
  /** REASON: the signal's reason (an Error whose message says why, or anything else). */
  constructor(reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason ?? 'interrupted'));
  }
}
