import { payingNote } from '../mcp/paying.js';
import { serveMcpHttp, serveMcpStdio } from '../mcp/index.js';
import { apiKey, type NotaryClientOptions } from '../sdk/ts/src/index.js';

export interface McpOptions {
  url?: string;
  http?: boolean;
  host: string;
  port: number;
  path: string;
  sign?: boolean;
  timeoutMs?: number;
}

/** `notary mcp`: the MCP server on stdio (stdout carries only MCP messages; notes go to stderr) or Streamable HTTP. */
export async function mcpCommand(opts: McpOptions): Promise<void> {
  const key = process.env['NOTARY_API_KEY'];
  const client: NotaryClientOptions = {
    baseUrl: opts.url ?? process.env['NOTARY_URL'] ?? 'http://127.0.0.1:8080',
    ...(key ? { payment: apiKey(key) } : {}),
    ...(opts.sign ? { sign: true } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    userAgent: 'notary-mcp/0.1.0',
  };
  const paying = payingNote(key !== undefined && key !== '');
  if (!opts.http) {
    const handle = serveMcpStdio(client);
    process.stderr.write(`notary mcp: stdio, calling ${client.baseUrl} (${paying})\n`);
    const stop = () => void handle.close().then(() => process.exit(0));
    process.stdin.once('end', stop);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }
  const server = await serveMcpHttp(client, { host: opts.host, port: opts.port, path: opts.path });
  process.stderr.write(`notary mcp: Streamable HTTP at ${server.url}, calling ${client.baseUrl} (${paying})\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
