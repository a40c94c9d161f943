// The one middleware every HTTP request passes before anything else (SPEC §6 security):
// - DNS rebinding: a web page can point a name it controls at 127.0.0.1 and make the browser talk
//   to this server; its requests then carry that name in Host and the page's origin in Origin. So
//   Host must be a loopback name or address with the bound port, and Origin, when present, a
//   loopback origin with that port. Bound to another address (which needs a token), Host may also
//   be that address, or anything for a wildcard bind, and Origin may be the request's own origin.
// - Bearer token: with a token, every request must carry `Authorization: Bearer <token>`, compared
//   in constant time (digests of equal length, so not even the length leaks).
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { RpcCode } from '../../jsonrpc/codes.js';
import { refusal, type HttpRefusal } from '../../jsonrpc/refusal.js';

export interface GuardPolicy {
  /** The address the server is bound to, as given (--http-host). */
  readonly bindHost: string;
  /** The port it listens on (the real one when 0 was asked for). */
  readonly port: number;
  /** The bearer token every request must carry, if any. */
  readonly token: string | undefined;
}

/**
 * Undefined when the request may go on; else why it is refused (never echoing a secret): 403 for
 * a Host or Origin that is not this server's, 401 without the token.
 */
export function checkRequest(
  headers: IncomingHttpHeaders,
  policy: GuardPolicy,
): HttpRefusal | undefined {
  const refused = (
    rule: 'host' | 'origin' | 'token',
    status: 401 | 403,
    message: string,
    extra: Readonly<Record<string, string>> = {},
  ) => refusal('request', message, { rule, status, rpcCode: RpcCode.Refused, headers: extra });
  const host = headers.host;
  if (host === undefined || !hostAllowed(host, policy)) {
    return refused('host', 403, `Forbidden: Host ${JSON.stringify(host ?? '')} is not this server`);
  }
  const origin = headers.origin;
  if (origin !== undefined && !originAllowed(origin, host, policy)) {
    return refused('origin', 403, `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`);
  }
  if (policy.token !== undefined && !bearerMatches(headers.authorization, policy.token)) {
    return refused(
      'token',
      401,
      'Unauthorized: this server needs "Authorization: Bearer <token>"',
      {
        'WWW-Authenticate': 'Bearer',
      },
    );
  }
  return undefined;
}

/** 127.0.0.0/8, ::1 and localhost: what only this machine can reach. */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1' || name === '0:0:0:0:0:0:0:1' || name === '::ffff:127.0.0.1';
}

/** 0.0.0.0 and ::, every address of the machine. */
export function isWildcard(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1');
  return name === '0.0.0.0' || name === '::' || name === '0:0:0:0:0:0:0:0';
}

/** Host and port of an authority (`name:port`, `[v6]:port`); the port defaults to `fallback`. */
function authority(value: string, fallback: number): { name: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value.trim());
  if (match?.[1] === undefined) return undefined;
  return {
    name: match[1].toLowerCase(),
    port: match[2] === undefined ? fallback : Number(match[2]),
  };
}

function hostAllowed(host: string, policy: GuardPolicy): boolean {
  const parsed = authority(host, 80);
  if (parsed === undefined || parsed.port !== policy.port) return false;
  if (isLoopback(parsed.name)) return true;
  if (isLoopback(policy.bindHost)) return false;
  return isWildcard(policy.bindHost) || sameName(parsed.name, policy.bindHost);
}

function originAllowed(origin: string, host: string, policy: GuardPolicy): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed frame, a file) and anything else unreadable
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (isLoopback(url.hostname) && port === policy.port) return true;
  // Same origin as the request itself: only meaningful off loopback, where Host was checked above.
  return !isLoopback(policy.bindHost) && url.host.toLowerCase() === host.trim().toLowerCase();
}

function sameName(a: string, b: string): boolean {
  const strip = (name: string) => name.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return strip(a) === strip(b);
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  const given = match?.[1] ?? '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  // Always compared, even when no token was given: the time taken says nothing.
  return timingSafeEqual(digest(given), digest(token)) && given !== '';
}
