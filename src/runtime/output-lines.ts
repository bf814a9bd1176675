// A member's output kept for the error that says why it did not start: its first lines (a program
// that cannot start often says why first, before a page of usage) and its last ones, with how many
// were dropped between them. Shared by the process, docker and swarm runtimes.

const HEAD_LINES = 5;
const TAIL_LINES = 20;

export class OutputLines {
  private readonly head: string[] = [];
  private readonly tail: string[] = [];
  private dropped = 0;

  /** Keeps a line (not a Java stack trace's frames: they say where, not what, and crowd out the message). */
  keep(line: string): void {
    if (/^\s+at |^\s*\.\.\. \d+ more$/.test(line)) return;
    if (this.head.length < HEAD_LINES) {
      this.head.push(line);
      return;
    }
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) {
      this.tail.shift();
      this.dropped++;
    }
  }

  /** Forgets everything: a new process of the member starts. */
  clear(): void {
    this.head.length = 0;
    this.tail.length = 0;
    this.dropped = 0;
  }

  /** The kept lines as one, ` | ` between them. */
  toString(): string {
    const gap = this.dropped > 0 ? [`… ${this.dropped} more lines …`] : [];
    return [...this.head, ...gap, ...this.tail].join(' | ');
  }
}
