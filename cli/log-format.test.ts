import { describe, expect, it } from 'vitest';
import { formatLogLine, logWriter, serverLoggerOptions, type LogStream } from './log-format.js';

function sink(isTTY: boolean): LogStream & { text: string } {
  const out = { text: '', isTTY, write: (t: string) => { out.text += t; return true; } };
  return out;
}

describe('server log format', () => {
  it('is JSON when standard output is not a terminal, human lines when it is', () => {
    expect(serverLoggerOptions('info', sink(false))).toEqual({ level: 'info' });
    const tty = sink(true);
    const options = serverLoggerOptions('warn', tty);
    expect(options.level).toBe('warn');
    options.stream?.write(`${JSON.stringify({ level: 30, time: Date.UTC(2026, 0, 1, 14, 2, 7), pid: 1, hostname: 'h', msg: 'notary listening on http://127.0.0.1:8080' })}\n`);
    expect(tty.text).toMatch(/^\d\d:\d\d:\d\d INFO {2}notary listening on http:\/\/127\.0\.0\.1:8080\n$/);
    expect(tty.text).not.toContain('{');
  });

  it('says a request once, when it is answered', () => {
    const tty = sink(true);
    const stream = serverLoggerOptions('info', tty).stream;
    stream?.write(`${JSON.stringify({ level: 30, time: 0, reqId: 'req-7', req: { method: 'POST', url: '/v1/search' }, msg: 'incoming request' })}\n`);
    expect(tty.text).toBe('');
    stream?.write(`${JSON.stringify({ level: 30, time: 0, reqId: 'req-7', res: { statusCode: 402 }, responseTime: 3.2, msg: 'request completed' })}\n`);
    expect(tty.text).toMatch(/^\d\d:\d\d:\d\d INFO {2}POST \/v1\/search → 402 in 3 ms \(req-7\)\n$/);
  });

  it('writes a finished request as method, path, status and time', () => {
    const line = formatLogLine(JSON.stringify({ level: 30, time: 0, reqId: 'req-1', req: { method: 'GET', url: '/v1/search?q=x' }, res: { statusCode: 200 }, responseTime: 12.4, msg: 'request completed' }));
    expect(line).toMatch(/ INFO {2}GET \/v1\/search\?q=x → 200 in 12 ms \(req-1\)\n$/);
    const warn = formatLogLine(JSON.stringify({ level: 40, time: 0, msg: 'index warm-up failed', role: 'primary', err: { message: 'boom', stack: 'Error: boom\n    at x' } }));
    expect(warn).toMatch(/ WARN {2}index warm-up failed role=primary\nError: boom\n {4}at x\n$/);
    expect(formatLogLine('not json')).toBe('not json\n');
  });

  it("the multi-process serve's main process writes the same way", () => {
    const pipe = sink(false);
    logWriter(pipe, { role: 'primary' })('info', 'serving with 2 API processes');
    expect(JSON.parse(pipe.text)).toMatchObject({ level: 'info', role: 'primary', msg: 'serving with 2 API processes' });
    const tty = sink(true);
    logWriter(tty, { role: 'primary' })('warn', 'API process 12 exited');
    expect(tty.text).toMatch(/^\d\d:\d\d:\d\d WARN {2}API process 12 exited role=primary\n$/);
  });
});
