// A small OpenAI-compatible endpoint for the livelog tests (node:http, 127.0.0.1): it answers
// POST /v1/chat/completions with CLEAN, or with an issue when the chunk (the user message)
// contains "PANIC"; it records every request, and can be made to hang, to fail, or be stopped and
// started again on the same port (an endpoint that goes down and comes back).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LlmRequest {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly model: string;
  readonly system: string;
  /** The chunk: the user message. */
  readonly chunk: string;
}

export type LlmMode =
  | 'answer'
  /** Never answers (the request stays open until the client gives up). */
  | 'hang'
  /** HTTP 401 whose body echoes the Authorization header it got (a hostile or careless endpoint). */
  | 'unauthorized'
  /** The same, padded so that the key straddles character 200 of the body (where reports cut it). */
  | 'unauthorized-cut'
  /** An issue whose summary quotes the Authorization header and a 12-character piece of the key. */
  | 'issue-with-key';

export class LlmServer {
  readonly requests: LlmRequest[] = [];
  mode: LlmMode = 'answer';
  #server: Server | undefined;
  #port = 0;
  readonly #open = new Set<ServerResponse>();

  /** Starts listening (on `port`, or a free one); resolves with the base_url ("…/v1"). */
  async start(port = this.#port): Promise<string> {
    const server = createServer((request, response) => void this.#handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
    return this.baseUrl;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${String(this.#port)}/v1`;
  }

  /** A free port with nothing listening (for an endpoint that is down from the start). */
  async reservePort(): Promise<string> {
    await this.start(0);
    await this.stop();
    return this.baseUrl;
  }

  /** Stops listening and drops open requests (the endpoint is down). */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    for (const response of this.#open) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The chunks checked so far. */
  chunks(): string[] {
    return this.requests.map((request) => request.chunk);
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let body = '';
    for await (const part of request) body += (part as Buffer).toString('utf8');
    const parsed = JSON.parse(body) as {
      model: string;
      messages: { role: string; content: string }[];
    };
    const authorization = request.headers.authorization;
    this.requests.push({
      path: request.url ?? '',
      authorization,
      model: parsed.model,
      system: parsed.messages.find((m) => m.role === 'system')?.content ?? '',
      chunk: parsed.messages.find((m) => m.role === 'user')?.content ?? '',
    });
    if (this.mode === 'hang') {
      this.#open.add(response);
      response.once('close', () => this.#open.delete(response));
      return;
    }
    if (this.mode === 'unauthorized') {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: `bad key: ${authorization ?? 'none'}` }));
      return;
    }
    if (this.mode === 'unauthorized-cut') {
      // '{"error":"' is 10 characters: the key starts at 190 and runs past 200.
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: `${'x'.repeat(173)}${authorization ?? 'none'}` }));
      return;
    }
    const key = authorization?.replace(/^Bearer /, '') ?? 'none';
    const chunk = this.requests.at(-1)?.chunk ?? '';
    if (this.mode === 'issue-with-key') {
      const content = `Issue: the log shows ${authorization ?? 'none'}, and a piece: ${key.slice(0, 12)}.`;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] }),
      );
      return;
    }
    const content = chunk.includes('PANIC')
      ? `Issue: a panic was logged (${chunk.split('\n').find((l) => l.includes('PANIC')) ?? ''})`
      : 'CLEAN';
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-test',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      }),
    );
  }
}
