// Reads the classic builder's output (`Step 3/17 : COPY …`, ` ---> Using cache`) line by line and
// turns it into one progress line per finished step: what it was, whether the layer cache served
// it, and how long it took.

export interface BuildStep {
  readonly index: number;
  readonly total: number;
  /** The instruction, shortened to one line. */
  readonly instruction: string;
  readonly cached: boolean;
  readonly ms: number;
}

const STEP = /^Step (\d+)\/(\d+) : (.*)$/;
const MAX_INSTRUCTION = 72;

export class BuildStepTracker {
  private current:
    { index: number; total: number; instruction: string; cached: boolean; startedAt: number } | undefined;
  readonly steps: BuildStep[] = [];

  constructor(
    private readonly onStep: (step: BuildStep) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Feed one output line; returns true when the line was builder bookkeeping (not worth showing). */
  line(text: string): boolean {
    const m = STEP.exec(text);
    if (m) {
      this.finish();
      this.current = {
        index: Number(m[1]),
        total: Number(m[2]),
        instruction: shorten(m[3] ?? ''),
        cached: false,
        startedAt: this.now(),
      };
      return true;
    }
    if (text.trim() === '---> Using cache') {
      if (this.current) this.current.cached = true;
      return true;
    }
    return (
      /^ ---> [0-9a-f]+$/.test(text) ||
      /^ ---> Running in [0-9a-f]+$/.test(text) ||
      /^Removing intermediate container/.test(text)
    );
  }

  /** Closes the step in progress (call at the end of the output). */
  finish(): void {
    const c = this.current;
    if (!c) return;
    this.current = undefined;
    const step: BuildStep = {
      index: c.index,
      total: c.total,
      instruction: c.instruction,
      cached: c.cached,
      ms: this.now() - c.startedAt,
    };
    this.steps.push(step);
    this.onStep(step);
  }
}

function shorten(instruction: string): string {
  const one = instruction.replace(/\s+/g, ' ').trim();
  return one.length <= MAX_INSTRUCTION ? one : `${one.slice(0, MAX_INSTRUCTION - 1)}…`;
}
