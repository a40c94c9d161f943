// One destination through the egress proxy (R7.17): its host normalized, the principal's rules,
// the names resolved, each address checked, and a connection to an address that passed. The
// socket connects to the address that was checked, never to the name again, so a name that
// resolves elsewhere the second time (DNS rebinding) changes nothing. A name that resolves into a
// special range (loopback, private, metadata …) is refused even when its rule allows it: the
// operator allowed a name on the internet, and only a rule naming the address (and port) lets a
// command reach what lies there. Deny rules are asked of each address as well as of the name.
import { connect, isIP, type Socket } from 'node:net';
import { specialRange } from './address-ranges.js';
import { normalizeHost, type HostPattern, type HostRules } from './host-rules.js';

export type EgressRefusal =
  | 'unlisted'
  | 'denied'
  | 'port'
  | 'private'
  | 'relay'
  | 'unresolved'
  | 'auth'
  | 'malformed'
  | 'loop'
  | 'upstream';

export type Resolver = (host: string) => Promise<readonly { address: string; family: number }[]>;

export interface UpstreamRequest {
  /** The host as the client sent it. */
  readonly host: string;
  readonly port: number;
  /** The rules in force for the client's principal. */
  readonly rules: () => HostRules;
  readonly resolve: Resolver;
  /** The proxy's own port: loopback at that port is the proxy itself. */
  readonly ownPort: number;
  readonly connectTimeoutMs: number;
  /** Told of every socket made, before it connects (so the proxy's close can destroy it). */
  readonly track: (socket: Socket) => void;
}

/** What a refusal says: the response's status, the refusal and its reason. */
export interface Refused {
  readonly ok: false;
  readonly status: number;
  readonly refusal: EgressRefusal;
  readonly reason: string;
  /** The host normalized when valid, else as sent. */
  readonly host: string;
  readonly rule: string | undefined;
  readonly address: string | undefined;
}

export interface Opened {
  readonly ok: true;
  readonly socket: Socket;
  readonly host: string;
  readonly rule: string;
  readonly address: string;
  /** Why it was allowed, for the decision. */
  readonly reason: string;
}

/** An address that passed its check; a special one names the rule that lets it through. */
interface Usable {
  readonly address: string;
  readonly range: string | undefined;
  readonly addressRule: string | undefined;
}

/** A host as written in a URL or a Host header: an IPv6 address in brackets. */
export function hostText(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** `host:port`, an IPv6 address in brackets. */
export function authority(host: string, port: number): string {
  return `${hostText(host)}:${port}`;
}

/** `text` as printable ASCII for a message (what a client sent may hold anything). */
export function shown(text: string): string {
  return text.slice(0, 200).replace(/[^\x20-\x7e]/g, '?');
}

/** Whether a connection to address:port would reach this proxy (it listens on loopback). */
function isProxyItself(address: string, port: number, ownPort: number): boolean {
  return port === ownPort && /loopback|unspecified/.test(specialRange(address) ?? '');
}

class ConnectTimeout extends Error {}

/** A socket connected to address:port, or the error (ConnectTimeout after timeoutMs). */
function connectTo(
  address: string,
  port: number,
  timeoutMs: number,
  track: (socket: Socket) => void,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, allowHalfOpen: true });
    track(socket);
    const timer = setTimeout(() => {
      reject(new ConnectTimeout());
      socket.destroy();
    }, timeoutMs);
    // Kept for the socket's life: an error later is followed by 'close', which the tunnel handles.
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('close', () => {
      clearTimeout(timer);
      reject(new Error('closed before connecting'));
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

/** The decision for one destination and, when allowed, a socket connected to a checked address. */
export async function openUpstream(request: UpstreamRequest): Promise<Opened | Refused> {
  const { port, ownPort } = request;
  const host = normalizeHost(request.host);
  const refuse = (
    status: number,
    refusal: EgressRefusal,
    reason: string,
    rule?: HostPattern,
    address?: string,
  ): Refused => ({
    ok: false,
    status,
    refusal,
    reason,
    host: host ?? request.host,
    rule: rule?.text,
    address,
  });
  if (host === undefined) {
    return refuse(
      400,
      'malformed',
      `"${shown(request.host)}" is not a host the proxy accepts: a name, an IPv4 address as four decimal numbers, or an IPv6 address in brackets`,
    );
  }
  const name = host;
  const target = authority(host, port);
  const literal = isIP(host) !== 0;
  if (literal && isProxyItself(host, port, ownPort)) {
    return refuse(403, 'loop', `${target} is the egress proxy itself`, undefined, host);
  }

  let rules: HostRules;
  try {
    rules = request.rules();
  } catch (error) {
    return refuse(
      403,
      'unlisted',
      `${target} is refused: the rules could not be read (${String(error)})`,
    );
  }
  const decision = rules.decide(host, port);
  if (decision.verdict === 'deny') {
    return refuse(403, 'denied', `${target} is denied by ${decision.rule.text}`, decision.rule);
  }
  if (decision.verdict === 'unlisted') {
    // HostRules says why in one of two ways: no rule names the host, or one does at other ports.
    return decision.why.startsWith('port ')
      ? refuse(403, 'port', `${target} is refused: ${decision.why}`)
      : refuse(403, 'unlisted', `${target} is ${decision.why}`);
  }
  const rule = decision.rule;

  let addresses: string[];
  if (literal) {
    addresses = [host];
  } else {
    try {
      const found = await request.resolve(host);
      addresses = found.flatMap(({ address }) => normalizeHost(address) ?? []);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      return refuse(502, 'unresolved', `${host} does not resolve (${code})`, rule);
    }
    if (addresses.length === 0)
      return refuse(502, 'unresolved', `${host} resolves to no address`, rule);
  }

  // Each address on its own: one special or denied address does not spoil the others.
  const usable: Usable[] = [];
  let first: Refused | undefined;
  for (const address of addresses) {
    const checked = checkAddress(address);
    if ('ok' in checked) first ??= checked;
    else usable.push(checked);
  }
  if (usable.length === 0 && first !== undefined) return first;
  return connectFirst(usable);

  function checkAddress(address: string): Usable | Refused {
    if (isProxyItself(address, port, ownPort)) {
      return refuse(
        403,
        'loop',
        `${target} (${address}) is the egress proxy itself`,
        rule,
        address,
      );
    }
    if (literal) return { address, range: undefined, addressRule: undefined };
    // The name's rule allowed the name; what its address allows is asked of the address too.
    const verdict = rules.decide(address, port);
    if (verdict.verdict === 'deny') {
      return refuse(
        403,
        'denied',
        `${name} resolves to ${address}, which is denied by ${verdict.rule.text}`,
        verdict.rule,
        address,
      );
    }
    const range = specialRange(address);
    if (range === undefined) return { address, range, addressRule: undefined };
    // Only a rule naming the address (with this port) reaches a special one: the command could
    // reach it as the literal then, so through the name it reaches nothing more.
    if (verdict.verdict === 'allow') return { address, range, addressRule: verdict.rule.text };
    return refuse(
      403,
      'private',
      `${name} resolves to ${address} (${range}), which only a rule naming the address allows ` +
        `(--allow-host ${authority(address, port)})`,
      rule,
      address,
    );
  }

  async function connectFirst(usable: readonly Usable[]): Promise<Opened | Refused> {
    const deadline = Date.now() + request.connectTimeoutMs;
    let failure: { address: string; error: unknown } | undefined;
    for (const { address, range, addressRule } of usable) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      try {
        const socket = await connectTo(address, port, remaining, request.track);
        const through = addressRule === undefined ? '' : `, ${range} allowed by ${addressRule}`;
        const reason = `${target} is allowed by ${rule.text} (${address}${through})`;
        return { ok: true, socket, host: name, rule: rule.text, address, reason };
      } catch (error) {
        failure = { address, error };
      }
    }
    const address = failure?.address ?? usable[0]?.address;
    if (failure === undefined || failure.error instanceof ConnectTimeout) {
      const seconds = request.connectTimeoutMs / 1000;
      return refuse(
        504,
        'upstream',
        `${target} (${address ?? 'no address'}) did not answer within ${seconds} s`,
        rule,
        address,
      );
    }
    const code = (failure.error as NodeJS.ErrnoException).code ?? String(failure.error);
    return refuse(
      502,
      'upstream',
      `could not connect to ${target} (${address}): ${code}`,
      rule,
      address,
    );
  }
}
