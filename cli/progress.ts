/**
 * Live progress for long commands: one rewritten line on a terminal, a line every few seconds otherwise
 * (CI logs, pipes), always on stderr so stdout stays machine-readable.
 */
export class ProgressLine {
  private lastPrint = 0;
  private lastLength = 0;
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly intervalMs = stream.isTTY ? 200 : 5000,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  update(text: string, force = false): void {
    const now = Date.now();
    if (!force && now - this.lastPrint < this.intervalMs) return;
    this.lastPrint = now;
    if (this.tty) {
      const pad = Math.max(0, this.lastLength - text.length);
      this.stream.write(`\r${text}${' '.repeat(pad)}`);
      this.lastLength = text.length;
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  done(text: string): void {
    if (this.tty && this.lastLength > 0) this.stream.write('\r' + ' '.repeat(this.lastLength) + '\r');
    this.stream.write(`${text}\n`);
    this.lastLength = 0;
  }
}
