/**
 * How the server's log lines look: one JSON object a line for machines (a pipe, a file, a log collector), and a short
 * human line when the stream is a terminal. The JSON lines are pino's (Fastify's logger); on a terminal they go
 * through `formatLogLine` on their way out.
 */

/** The stream a log writes to: what `isTTY` says decides the format. */
export interface LogStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, or that the human line already shows in its own way. */
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'req', 'res', 'responseTime', 'err', 'reqId', 'v']);

function levelName(level: unknown): string {
  if (typeof level === 'number') return LEVELS[level] ?? String(level);
  return typeof level === 'string' ? level.toUpperCase() : 'INFO';
}

function clock(time: unknown): string {
  const date = new Date(typeof time === 'number' ? time : Date.now());
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

/**
 * One JSON log line as a person reads it: `14:02:07 INFO  notary listening on ...`; a finished request as
 * `14:02:09 INFO  GET /v1/search → 200 in 12 ms (req-1)`; other fields as `key=value` after the message, an error's
 * stack on the lines below. A line that is not JSON is returned as it came. Given `requests`, a request's start is
 * kept there (and '' returned) to be said with its end.
 */
export function formatLogLine(line: string, requests?: Map<string, string>): string {
  let entry: Record<string, unknown>;
  try {
    entry = record(JSON.parse(line));
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const req = record(entry['req']);
  const res = record(entry['res']);
  const id = typeof entry['reqId'] === 'string' || typeof entry['reqId'] === 'number' ? String(entry['reqId']) : null;
  let msg = typeof entry['msg'] === 'string' ? entry['msg'] : '';
  if (typeof res['statusCode'] === 'number') {
    const took = typeof entry['responseTime'] === 'number' ? ` in ${Math.round(entry['responseTime'])} ms` : '';
    const started = id !== null ? requests?.get(id) : undefined;
    if (id !== null) requests?.delete(id);
    const what = typeof req['method'] === 'string' ? `${req['method']} ${String(req['url'] ?? '')} ` : started ? `${started} ` : '';
    msg = `${what}→ ${res['statusCode']}${took}`;
  } else if (typeof req['method'] === 'string') {
    msg = `${req['method']} ${String(req['url'] ?? '')}`;
    // With a memory of requests, the start is said together with the end: one line a request.
    if (requests && id !== null) {
      if (requests.size >= 10_000) requests.clear();
      requests.set(id, msg);
      return '';
    }
  }
  if (typeof entry['reqId'] === 'string' || typeof entry['reqId'] === 'number') msg += ` (${entry['reqId']})`;
  const extra = Object.entries(entry)
    .filter(([key]) => !SHOWN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const err = record(entry['err']);
  const errText = typeof err['stack'] === 'string' ? `\n${err['stack']}` : typeof err['message'] === 'string' ? ` error=${err['message']}` : '';
  return `${clock(entry['time'])} ${levelName(entry['level']).padEnd(5)} ${msg}${extra.length ? ` ${extra.join(' ')}` : ''}${errText}\n`;
}

/** A stream that writes pino's JSON lines to `out` as human lines, one a request (`GET /v1/search → 200 in 12 ms`). */
export function prettyStream(out: LogStream): LogStream {
  const requests = new Map<string, string>();
  return {
    write: (text: string) => {
      // pino writes one line a call; split anyway, a line is never cut in two.
      for (const line of text.split('\n')) {
        const human = line.trim() ? formatLogLine(line, requests) : '';
        if (human) out.write(human);
      }
      return true;
    },
  };
}

/**
 * Fastify's `logger` options for a server process: pino's JSON to `out` (standard output by default), or human lines
 * when `out` is a terminal.
 */
export function serverLoggerOptions(level: string, out: LogStream = process.stdout): { level: string; stream?: LogStream } {
  return out.isTTY ? { level, stream: prettyStream(out) } : { level };
}

/** A writer of one log record to `out`: JSON, or the human line on a terminal (the multi-process serve's main process). */
export function logWriter(out: LogStream, fields: Record<string, unknown> = {}): (level: 'info' | 'warn' | 'error', msg: string) => void {
  return (level, msg) => {
    const json = JSON.stringify({ level, time: Date.now(), pid: process.pid, ...fields, msg });
    out.write(out.isTTY ? formatLogLine(json) : `${json}\n`);
  };
}
