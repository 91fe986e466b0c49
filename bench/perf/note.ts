/** A progress line of the benchmark on stderr (stdout carries its tables). */
export function note(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
