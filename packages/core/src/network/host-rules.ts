// The egress proxy's host rules (R7.17): the patterns the operator (or a grant) writes, `name`,
// `*.domain` or an IP address, each with an optional port, and the decision for one destination.
// Deny wins over allow. Names are compared as IDNA ASCII (UTS #46 through url.domainToASCII, the
// WHATWG host parser's own mapping, so `bücher.example` and `xn--bcher-kva.example` are one host)
// and IP addresses in one canonical text. An IPv4 address written any other way than four decimal
// numbers (`127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1`) is no host at all: getaddrinfo would
// turn it into an address no rule named, so such a destination is refused as malformed.
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { AhmaError } from '../errors.js';

export interface HostPattern {
  /** Canonical text for messages and ledgers: `registry.npmjs.org`, `*.crates.io`, `127.0.0.1:5432`, `[::1]:8080`, `example.com:8443`. */
  readonly text: string;
  /** ASCII lower-case name without trailing dot (for `*.x` the suffix `x`), or the canonical IP literal (IPv6 without brackets). */
  readonly host: string;
  readonly wildcard: boolean;
  /** 'ipv4' | 'ipv6' for an IP-literal pattern, else undefined. */
  readonly ip: 'ipv4' | 'ipv6' | undefined;
  /** Allowed ports; empty means the defaults 80 and 443. */
  readonly ports: readonly number[];
}

/** The ports a pattern without one allows: HTTP and HTTPS. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

const ACCEPTED =
  'a host pattern is a host name (registry.npmjs.org), *.domain (*.crates.io) or an IP address ' +
  '(127.0.0.1, [::1]), each with an optional :port (example.com:8443, [::1]:8080)';

/** Characters a host may be written with before IDNA: ASCII letters, digits, `-`, `_`, `.`, and any non-ASCII. */
const HOST_CHARACTERS = /^[A-Za-z0-9._\-\u{80}-\u{10FFFF}]+$/u;
/** An IDNA ASCII name: labels of letters, digits, `-` and `_`, at most 63 each. */
const ASCII_NAME = /^(?:[a-z0-9_-]{1,63}\.)*[a-z0-9_-]{1,63}$/;
/** What the WHATWG host parser reads as an IPv4 number (decimal, octal or hex), in a last label. */
const NUMERIC_LABEL = /^(?:\d+|0x[0-9a-f]*)$/i;

function refuse(text: string, problem: string): never {
  throw new AhmaError('CONFIG_INVALID', `host pattern "${text}": ${problem}; ${ACCEPTED}`);
}

/** The canonical text of an IPv6 address (RFC 5952 form, as the URL parser writes it), or undefined. */
function canonicalIPv6(text: string): string | undefined {
  // A zone (`fe80::1%eth0`) names an interface, not a destination a rule could name.
  if (!isIPv6(text) || text.includes('%')) return undefined;
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** The IDNA ASCII lower-case form of a host name without its trailing dot, or undefined. */
function asciiName(text: string): string | undefined {
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  // Checked before IDNA: domainToASCII also percent-decodes and drops tabs and what follows a `/`.
  if (!HOST_CHARACTERS.test(name)) return undefined;
  const ascii = domainToASCII(name);
  if (ascii === '' || ascii.length > 253 || !ASCII_NAME.test(ascii)) return undefined;
  // A number in the last label makes the URL parser read an IPv4 address (`１２７.０.０.１`, `a.0x10`).
  if (isIP(ascii) !== 0 || NUMERIC_LABEL.test(ascii.slice(ascii.lastIndexOf('.') + 1))) {
    return undefined;
  }
  return ascii;
}

/**
 * A request's host in the form rules compare: an IPv6 address (with or without brackets) in
 * canonical form, an IPv4 address as four decimal numbers, or a name in IDNA ASCII lower case
 * without its trailing dot. Undefined for anything else: empty, spaces, bad IDNA, an IPv4 address
 * written another way.
 */
export function normalizeHost(host: string): string | undefined {
  if (host.startsWith('['))
    return host.endsWith(']') ? canonicalIPv6(host.slice(1, -1)) : undefined;
  if (host.includes(':')) return canonicalIPv6(host);
  if (isIPv4(host)) return host;
  return asciiName(host);
}

function parsePort(text: string, port: string): number {
  const value = /^\d{1,5}$/.test(port) ? Number(port) : NaN;
  if (!(value >= 1 && value <= 65535)) refuse(text, `the port "${port}" is not a number 1-65535`);
  return value;
}

/** The pattern's host part and port text (undefined without one). */
function splitPort(text: string, source: string): { host: string; port: string | undefined } {
  if (source.startsWith('[')) {
    const match = /^\[([^\]]*)\](?::(.*))?$/.exec(source);
    if (match === null) refuse(text, 'an IPv6 address in brackets is followed by nothing or :port');
    return { host: match[1] ?? '', port: match[2] };
  }
  const colons = source.split(':').length - 1;
  // More than one colon: an IPv6 address without brackets, which then has no port.
  if (colons !== 1) return { host: source, port: undefined };
  const at = source.indexOf(':');
  return { host: source.slice(0, at), port: source.slice(at + 1) };
}

/**
 * The pattern `text` means. Throws CONFIG_INVALID, saying what is accepted, for a bare `*`, a `*`
 * that is not the whole first label, a wildcard over an IP address, an empty label, bad IDNA, an
 * IPv4 address not written as four decimal numbers, a port outside 1-65535, a scheme or a path.
 */
export function parseHostPattern(text: string): HostPattern {
  const source = text.trim();
  if (source === '') refuse(text, 'it is empty');
  if (source.includes('://') || /[/\\?#@\s]/.test(source)) {
    refuse(text, 'a pattern names a host, without scheme, user, path or spaces');
  }
  const split = splitPort(text, source);
  const ports = split.port === undefined ? [] : [parsePort(text, split.port)];
  const portText = ports.length === 0 ? '' : `:${ports[0]}`;
  let host = split.host;

  if (host.includes('*')) {
    if (host === '*')
      refuse(text, '`*` alone would allow every host; name a domain (*.example.com)');
    if (!host.startsWith('*.') || host.slice(1).includes('*')) {
      refuse(text, '`*` is accepted only as the whole first label (*.example.com)');
    }
    host = host.slice(2);
    if (host === '' || host === '.') refuse(text, '`*.` needs a domain after it (*.example.com)');
    if (host.includes(':') || host.startsWith('[') || /^[\d.]+$/.test(host)) {
      refuse(text, 'a wildcard names the subdomains of a domain, not IP addresses');
    }
    const suffix = asciiName(host);
    if (suffix === undefined) refuse(text, `"${host}" is not a valid domain name`);
    return { text: `*.${suffix}${portText}`, host: suffix, wildcard: true, ip: undefined, ports };
  }

  if (host.includes(':') || source.startsWith('[')) {
    const address = canonicalIPv6(host);
    if (address === undefined) refuse(text, `"${host}" is not an IPv6 address`);
    return { text: `[${address}]${portText}`, host: address, wildcard: false, ip: 'ipv6', ports };
  }
  if (isIPv4(host)) {
    return { text: `${host}${portText}`, host, wildcard: false, ip: 'ipv4', ports };
  }
  const name = asciiName(host);
  if (name === undefined) {
    const looksNumeric = /^[\d.x]+$/i.test(host) || isIP(domainToASCII(host)) !== 0;
    refuse(
      text,
      looksNumeric
        ? `"${host}" is no IPv4 address as written here: write four decimal numbers without leading zeros (127.0.0.1)`
        : `"${host}" is not a valid host name (empty label, bad IDNA or a character a name cannot hold)`,
    );
  }
  return { text: `${name}${portText}`, host: name, wildcard: false, ip: undefined, ports };
}

/** What is wrong with the pattern `text` (parseHostPattern's message), or undefined when it is one. */
export function hostPatternProblem(text: string): string | undefined {
  try {
    parseHostPattern(text);
    return undefined;
  } catch (error) {
    if (error instanceof AhmaError) return error.message;
    throw error;
  }
}

export type HostDecision =
  | { readonly verdict: 'allow'; readonly rule: HostPattern }
  | { readonly verdict: 'deny'; readonly rule: HostPattern }
  | { readonly verdict: 'unlisted'; readonly why: string };

/** Whether `pattern` names `host`: the same name or IP, or for `*.x` a name with more labels ending in `.x`. */
function namesHost(pattern: HostPattern, host: string): boolean {
  if (!pattern.wildcard) return pattern.host === host;
  return isIP(host) === 0 && host.endsWith(`.${pattern.host}`);
}

function portsOf(pattern: HostPattern): readonly number[] {
  return pattern.ports.length === 0 ? DEFAULT_PORTS : pattern.ports;
}

function toPatterns(rules: readonly (string | HostPattern)[]): readonly HostPattern[] {
  return Object.freeze(
    rules.map((rule) => (typeof rule === 'string' ? parseHostPattern(rule) : rule)),
  );
}

/** The allow and deny patterns in force for one principal. Immutable: `with` makes a new set. */
export class HostRules {
  readonly allow: readonly HostPattern[];
  readonly deny: readonly HostPattern[];

  constructor(
    allow: readonly (string | HostPattern)[] = [],
    deny: readonly (string | HostPattern)[] = [],
  ) {
    this.allow = toPatterns(allow);
    this.deny = toPatterns(deny);
  }

  /** A new set with more rules (grants are added this way). */
  with(
    allow: readonly (string | HostPattern)[],
    deny: readonly (string | HostPattern)[] = [],
  ): HostRules {
    return new HostRules([...this.allow, ...allow], [...this.deny, ...deny]);
  }

  /**
   * The decision for `host` (already normalized, see normalizeHost) and `port`. Deny wins, and a
   * deny pattern without a port denies every port (a denied host stays denied whatever port is
   * tried). An allow pattern matches when it names the host and the port is among its ports, or
   * the defaults 80 and 443 when it has none.
   */
  decide(host: string, port: number): HostDecision {
    const denied = this.deny.find(
      (rule) => namesHost(rule, host) && (rule.ports.length === 0 || rule.ports.includes(port)),
    );
    if (denied !== undefined) return { verdict: 'deny', rule: denied };
    const named = this.allow.filter((rule) => namesHost(rule, host));
    const allowed = named.find((rule) => portsOf(rule).includes(port));
    if (allowed !== undefined) return { verdict: 'allow', rule: allowed };
    const first = named[0];
    if (first === undefined) return { verdict: 'unlisted', why: 'not on the allowlist' };
    return {
      verdict: 'unlisted',
      why: `port ${port} is not allowed by ${first.text} (${portsOf(first).join(', ')})`,
    };
  }
}
