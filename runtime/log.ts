export type Log = (level: 'info' | 'warn', message: string) => void;

export const stderrLog: Log = (level, message) => {
  process.stderr.write(`${level === 'warn' ? 'WARNING: ' : ''}${message}\n`);
};

export const silentLog: Log = () => {};

/** Warnings only, for commands whose standard error is part of their output. */
export const warningsLog: Log = (level, message) => {
  if (level === 'warn') stderrLog(level, message);
};
