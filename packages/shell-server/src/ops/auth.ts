// Who may see the operations page. A browser cannot send the HTTP server's bearer token, and the
// page shows what commands print (secrets included), so it has its own key: a one-time link
// (`/ops/login?key=…`, printed in the server's log and by `ahma-shell doctor`) that, used once,
// sets a cookie the browser then sends by itself — HttpOnly (no script reads it) and
// SameSite=Strict (no other site's page makes the browser send it). Each use of a link mints the
// next one, so the link on record is always unused. Everything is in memory: a restarted server
// asks for a new link.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const OPS_COOKIE = 'ahma_ops';
/** Browsers signed in at once, at most (the oldest is signed out first). */
const MAX_SESSIONS = 16;

export class OpsAuth {
  #linkKey = newSecret();
  readonly #sessions: Buffer[] = [];
  readonly #onLink: (key: string) => void;

  /** `onLink` hears every new link key (the first at once), to put it on record. */
  constructor(onLink: (key: string) => void = () => undefined) {
    this.#onLink = onLink;
    onLink(this.#linkKey);
  }

  /** The unused link's key. */
  get linkKey(): string {
    return this.#linkKey;
  }

  /**
   * Uses the link: the value of a new session cookie when `key` is the unused link's, else
   * undefined. Either way a right key is spent.
   */
  redeem(key: string): string | undefined {
    if (!sameSecret(key, this.#linkKey)) return undefined;
    this.#linkKey = newSecret();
    this.#onLink(this.#linkKey);
    const session = newSecret();
    this.#sessions.push(digest(session));
    if (this.#sessions.length > MAX_SESSIONS) this.#sessions.shift();
    return session;
  }

  /** Whether the request's Cookie header carries a session of this server. */
  signedIn(cookieHeader: string | undefined): boolean {
    const value = cookieValue(cookieHeader, OPS_COOKIE);
    if (value === undefined) return false;
    const given = digest(value);
    // Compared with every session, always: the time taken says nothing about which matched.
    let found = false;
    for (const session of this.#sessions) found = timingSafeEqual(given, session) || found;
    return found;
  }

  /** The Set-Cookie header of a new session. */
  static cookie(session: string): string {
    return `${OPS_COOKIE}=${session}; Path=/ops; HttpOnly; SameSite=Strict`;
  }
}

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (text: string) => createHash('sha256').update(text).digest();

function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
