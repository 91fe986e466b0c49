import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How the chat server answers the next requests. */
export type ChatBehaviour = { kind: 'answer'; content: string } | { kind: 'status'; status: number } | { kind: 'hang' } | { kind: 'garbage' };

export interface ChatRequest {
  path: string;
  authorization: string | undefined;
  body: { model: string; messages: Array<{ role: string; content: string }>; temperature: number };
}

export interface ChatServer {
  /** Base URL of the API, ending in /v1. */
  url: string;
  requests: ChatRequest[];
  behaviour: ChatBehaviour;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible chat completions endpoint on 127.0.0.1 standing in for the operator's language model server
 * (none runs on these machines): records each request and answers as `behaviour` says.
 */
export async function startChatServer(behaviour: ChatBehaviour = { kind: 'answer', content: '' }): Promise<ChatServer> {
  const sockets = new Set<Socket>();
  const state: ChatServer = { url: '', requests: [], behaviour, close: async () => {} };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'];
    state.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
    const b = state.behaviour;
    if (b.kind === 'hang') return; // never answers: the client must give up
    if (b.kind === 'status') {
      res.writeHead(b.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'model overloaded', type: 'server_error' } }));
      return;
    }
    const choices =
      b.kind === 'garbage' ? [] : [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: b.content } }];
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion', created: 0, model: body.model, choices }));
  }

  const server = createServer((req, res) => void handle(req, res));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
