// The operations page's HTTP side, everything under /ops: the one-time login, the page itself
// (plain HTML, CSS and JS files of this package, no build step, nothing from another origin), and
// its API — the list of operations, a stream of changes and live output (SSE), the whole output
// read through the `output` tool, and cancelling through the `cancel` tool, so the page can do
// nothing an agent's call could not. The HTTP server (transports/http) and --ops-page's own
// loopback server (ops/server.ts) both route /ops here after their Host and Origin guard.
//
// Browsers are kept out three ways besides that guard: the session cookie is SameSite=Strict; a
// request another origin's page makes is refused by its Sec-Fetch-Site (a page on another
// localhost port is the same *site*, so the cookie alone would not stop it); and a change (cancel)
// must be a JSON POST carrying this origin's Origin. What commands print is only ever put in the
// page as text (ops.js), under a Content-Security-Policy that runs no inline script.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BUILTIN_TOOLS } from '@ahma/core';
import { opsPageDirectory } from '../package.js';
import type { Runtime } from '../runtime/runtime.js';
import { OpsAuth } from './auth.js';
import { OpsFeed, type FeedEvent } from './feed.js';

export const OPS_PATH = '/ops';
export const OPS_LOGIN_PATH = '/ops/login';

/** The largest cancel request body. */
const MAX_BODY_BYTES = 4096;
/** A page that reads its stream slower than this much is behind is dropped (it reconnects). */
const MAX_STREAM_BACKLOG = 4 * 1024 * 1024;
/** How often a stream gets the list again while something runs (elapsed time, queue places). */
const REFRESH_MS = 1000;
const KEEPALIVE_MS = 15_000;

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

const ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  '/ops': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ops/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ops/ops.js': { file: 'ops.js', type: 'text/javascript; charset=utf-8' },
  '/ops/ops.css': { file: 'ops.css', type: 'text/css; charset=utf-8' },
};

export interface OpsPageOptions {
  /** Hears every new unused link key (the first at once): the server puts the link on record. */
  readonly onLink?: (key: string) => void;
}

export class OpsPage {
  readonly auth: OpsAuth;
  readonly feed: OpsFeed;
  readonly #runtime: Runtime;
  readonly #streams = new Set<ServerResponse>();
  readonly #assets = new Map<string, Buffer>();

  constructor(runtime: Runtime, options: OpsPageOptions = {}) {
    this.#runtime = runtime;
    this.feed = new OpsFeed(runtime.engine);
    this.auth = new OpsAuth(options.onLink);
  }

  /** The unused one-time link, for a server whose origin is `origin` (http://host:port). */
  link(origin: string): string {
    return `${origin}${OPS_LOGIN_PATH}?key=${this.auth.linkKey}`;
  }

  /** Whether `pathname` is the page's. */
  static owns(pathname: string): boolean {
    return pathname === OPS_PATH || pathname.startsWith(`${OPS_PATH}/`);
  }

  /** Answers a request under /ops that passed the server's Host and Origin guard. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const site = req.headers['sec-fetch-site'];
    const method = req.method ?? 'GET';
    if (url.pathname === OPS_LOGIN_PATH && method === 'GET') return this.#login(res, url, site);
    if (!this.auth.signedIn(req.headers.cookie)) {
      return plain(
        res,
        401,
        'This page needs its one-time link: see the server log or `ahma-shell doctor`.',
      );
    }
    // A navigation the person started has no site or `none`; everything else the page itself asks
    // for is same-origin. Another origin's page (another port on this machine too) is refused.
    const api = url.pathname.startsWith(`${OPS_PATH}/api/`);
    const allowed = api
      ? site === 'same-origin'
      : site === undefined || site === 'none' || site === 'same-origin';
    if (site !== undefined && !allowed) {
      return plain(res, 403, 'Forbidden: the operations page answers only its own pages.');
    }
    const asset = ASSETS[url.pathname];
    if (asset !== undefined && method === 'GET') return this.#asset(res, asset);
    if (url.pathname === '/ops/api/operations' && method === 'GET') {
      return json(res, 200, { operations: this.feed.list() });
    }
    if (url.pathname === '/ops/api/events' && method === 'GET') return this.#stream(req, res);
    if (url.pathname === '/ops/api/output' && method === 'GET') return this.#output(res, url);
    if (url.pathname === '/ops/api/cancel') {
      if (method !== 'POST') return plain(res, 405, 'Method not allowed', { Allow: 'POST' });
      return this.#cancel(req, res);
    }
    return plain(res, 404, 'Not found');
  }

  /** Ends every open stream and stops watching the engine. */
  close(): void {
    for (const res of this.#streams) res.end();
    this.#streams.clear();
    this.feed.close();
  }

  #login(res: ServerResponse, url: URL, site: string | string[] | undefined): void {
    // A link is opened by the person (typed, pasted, clicked in a terminal), never by a page.
    if (site !== undefined && site !== 'none' && site !== 'same-origin') {
      return plain(res, 403, 'Forbidden: the one-time link must be opened directly.');
    }
    const session = this.auth.redeem(url.searchParams.get('key') ?? '');
    if (session === undefined) {
      return plain(
        res,
        403,
        'This link was used already or is not this server’s. A new one: `ahma-shell doctor`, or the server log.',
      );
    }
    res.writeHead(303, {
      ...SECURITY_HEADERS,
      Location: OPS_PATH,
      'Set-Cookie': OpsAuth.cookie(session),
    });
    res.end();
  }

  async #asset(res: ServerResponse, asset: { file: string; type: string }): Promise<void> {
    let body = this.#assets.get(asset.file);
    if (body === undefined) {
      body = await readFile(join(opsPageDirectory(), asset.file));
      this.#assets.set(asset.file, body);
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': asset.type });
    res.end(body);
  }

  #stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
    });
    this.#streams.add(res);
    const send = (event: string, data: unknown) => {
      if (res.destroyed) return;
      if (res.writableLength > MAX_STREAM_BACKLOG) {
        res.destroy(); // the page reconnects and starts afresh
        return;
      }
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    let listed: NodeJS.Timeout | undefined;
    const sendList = () => {
      clearTimeout(listed);
      listed = undefined;
      const operations = this.feed.list();
      send('operations', { operations });
      // While something runs or waits, its elapsed time and place in line move on.
      if (operations.some((operation) => operation.status === 'running')) {
        listed = setTimeout(sendList, REFRESH_MS);
      }
    };
    sendList();
    for (const tail of this.feed.tails()) if (tail.text !== '') send('output', tail);
    const unsubscribe = this.feed.subscribe((event: FeedEvent) => {
      if (event.type === 'output') send('output', { id: event.id, text: event.text });
      else {
        clearTimeout(listed);
        listed = setTimeout(sendList, 50); // a burst of changes is one list
      }
    });
    const keepalive = setInterval(() => {
      if (!res.destroyed) res.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    const end = () => {
      unsubscribe();
      clearTimeout(listed);
      clearInterval(keepalive);
      this.#streams.delete(res);
    };
    req.on('close', end);
    res.on('close', end);
  }

  /** A window of an operation's whole output, read by the `output` tool itself. */
  async #output(res: ServerResponse, url: URL): Promise<void> {
    const args: Record<string, unknown> = { id: url.searchParams.get('id') ?? '' };
    for (const name of ['offset', 'length', 'tail']) {
      const value = url.searchParams.get(name);
      if (value !== null) args[name] = Number(value);
    }
    const answer = await this.#callBuiltIn(BUILTIN_TOOLS.output, args);
    return json(
      res,
      answer.ok ? 200 : 400,
      answer.ok ? answer.structured : { error: answer.message },
    );
  }

  async #cancel(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The guard let only this server's own origins through; a change must name one.
    if (!sameOrigin(req.headers.origin, req.headers.host)) {
      return plain(res, 403, 'Forbidden: a change needs this page’s Origin.');
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return plain(res, 415, 'A cancel is a JSON body {"id": "…"}.');
    }
    const body = await readBody(req, MAX_BODY_BYTES);
    let id: unknown;
    try {
      id = (JSON.parse(body ?? '') as { id?: unknown }).id;
    } catch {
      id = undefined;
    }
    if (typeof id !== 'string') return plain(res, 400, 'A cancel is a JSON body {"id": "…"}.');
    const answer = await this.#callBuiltIn(BUILTIN_TOOLS.cancel, {
      id,
      reason: 'cancelled from the operations page',
    });
    return json(
      res,
      answer.ok ? 200 : 409,
      answer.ok ? answer.structured : { error: answer.message },
    );
  }

  /** Calls a built-in tool as an agent would; its answer, or why it refused. */
  async #callBuiltIn(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ ok: true; structured: unknown } | { ok: false; message: string }> {
    const entry = this.#runtime.tools.find((candidate) => candidate.tool.name === name);
    if (entry === undefined) return { ok: false, message: `${name} is not served` };
    const outcome = await entry.call(args, {
      signal: new AbortController().signal,
      progress: undefined,
    });
    if (outcome.kind === 'refused') return { ok: false, message: outcome.message };
    if (outcome.kind !== 'answer') return { ok: false, message: `${name} started an operation` };
    const result = outcome.result;
    if (result.isError === true) {
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      return { ok: false, message: text };
    }
    return { ok: true, structured: result.structuredContent };
  }
}

function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined || host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

function plain(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...headers,
    'Content-Type': 'text/plain; charset=utf-8',
  });
  res.end(`${text}\n`);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The body as text, or undefined when it is larger than `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
