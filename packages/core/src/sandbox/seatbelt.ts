// macOS (R7.3): a Seatbelt profile for sandbox-exec. Deny by default, reads allowed, writes only in
// the writable roots, temp folders and terminal devices. Paths are never spliced into the profile
// text: they are passed as -D parameters and referenced with (param "…").
//
// R7.10 on macOS: after the reads and writes it allows, the profile denies reading (and writing)
// each entry of the read policy's deny lists. A deny rule is narrowed with require-not to leave out
// what stays readable inside it (its `except` names, --allow-read paths and writable paths lying
// inside it), so no allow ever has to override a deny: Seatbelt lets the last matching rule win,
// and a deny narrowed this way gives the same answer whichever order (or specificity) decides.
// A glob entry (`~/.ssh/*`) needs a regex, whose text cannot come from a parameter: its directory
// is regex-escaped completely, and a path holding a character that cannot be written safely in a
// #"…" string (a quote, a backslash, a control character) is refused.
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { AhmaError } from '../errors.js';
import { isInside } from '../paths/inside.js';
import { realPrefix } from '../paths/real-sync.js';
import { nameGlob, type DenyEntry } from './read-policy.js';
import type { NetworkMode } from './network.js';

/** The sandbox-exec binary on every macOS. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** What the profile denies reading, and what stays readable inside a denied path. */
export interface SeatbeltReads {
  /** The read policy's deny entries, each in every spelling macOS may see (seatbeltReads). */
  readonly denies: readonly DenyEntry[];
  /** --allow-read paths, readable even inside a denied one, in every spelling. */
  readonly readable: readonly string[];
}

/** No read rules: everything is readable. */
export const NO_READ_RULES: SeatbeltReads = { denies: [], readable: [] };

/** A profile and the -D parameters its (param "…") references need. */
export interface SeatbeltProfile {
  readonly text: string;
  /** `-D`, `NAME=value`, … for every parameter the text references, each once. */
  readonly parameters: readonly string[];
}

/**
 * What commands may reach on the network (R7.15, R7.16): `proxyPort` is the egress proxy's
 * loopback port, required with `proxy`.
 */
export interface SeatbeltNetwork {
  readonly mode: NetworkMode;
  readonly proxyPort?: number | undefined;
}

/** The temp folders the profile always lets commands write (real paths). */
const ALWAYS_WRITABLE = ['/private/tmp', '/private/var/folders'];

/** sandbox-exec refuses a string literal much over 1 KB; a longer regex would void the profile. */
const MAX_REGEX_BYTES = 1000;

/**
 * The deny entries and readable paths in every spelling macOS may match: as given, with the links
 * on the way resolved (Seatbelt sees real paths), and /tmp, /var, /etc under /private. Reads the
 * file system (realpath), so it runs once per sandbox.
 */
export function seatbeltReads(
  denies: readonly DenyEntry[],
  readable: readonly string[],
): SeatbeltReads {
  const spelled: DenyEntry[] = [];
  const seen = new Set<string>();
  for (const deny of denies) {
    const name = basename(deny.path);
    // A glob names entries of its directory: the directory is what is resolved. A literal path is
    // resolved whole, so a link to elsewhere (a ~/.aws kept in a synced folder) is denied there too.
    const paths = /[*?]/.test(name)
      ? spellings(dirname(deny.path)).map((dir) => join(dir, name))
      : spellings(deny.path);
    for (const path of paths) {
      const key = `${path}\0${deny.except.join('\0')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      spelled.push({ ...deny, path });
    }
  }
  return { denies: spelled, readable: [...new Set(readable.flatMap(spellings))] };
}

/**
 * The profile for `writable` roots (real paths, named WRITABLE_0 …), the read rules and the
 * network mode. Throws SANDBOX_UNAVAILABLE when a path that must go into a regex holds a character
 * it cannot carry, CONFIG_INVALID for `proxy` without a valid port.
 */
export function seatbeltProfile(
  writable: readonly string[],
  reads: SeatbeltReads = NO_READ_RULES,
  network: SeatbeltNetwork = { mode: 'host' },
): SeatbeltProfile {
  const parameters = new Parameters();
  const writableNames = writable.map((path) => parameters.name('WRITABLE', path));
  const writeRules = writableNames.map((name) => `(allow file-write* (subpath (param "${name}")))`);
  const readRules = readDenyRules(
    reads,
    writable.map((path, index) => ({ path, name: writableNames[index] ?? '' })),
    parameters,
  );
  const text = [
    '(version 1)',
    '(deny default)',
    '(allow process-exec)',
    '(allow process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow file-read*)',
    ...writeRules,
    ...ALWAYS_WRITABLE.map((path) => `(allow file-write* (subpath "${path}"))`),
    '(allow file-write* (literal "/dev/null"))',
    '(allow file-write* (literal "/dev/zero"))',
    '(allow file-write* (literal "/dev/dtracehelper"))',
    '(allow file-write* (regex #"^/dev/ttys[0-9]+$"))',
    '(allow file-ioctl (regex #"^/dev/ttys[0-9]+$"))',
    ...readRules,
    '(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))',
    '(allow mach-lookup (global-name "com.apple.system.logger"))',
    '(allow mach-lookup (global-name "com.apple.trustd.agent"))',
    '(allow mach-lookup (global-name "com.apple.SecurityServer"))',
    ...networkRules(network),
    '(allow ipc-posix-shm)',
    '',
  ].join('\n');
  return { text, parameters: parameters.argv };
}

/**
 * R7.15: `none` leaves every network operation to (deny default). R7.16: `proxy` lets commands
 * connect to the egress proxy's port on loopback and nowhere else (Seatbelt's `remote ip` takes
 * `localhost` or `*` as the host); binding and inbound connections stay denied. The port is
 * checked to be an integer, so it is the only text spliced into the profile.
 */
function networkRules(network: SeatbeltNetwork): string[] {
  switch (network.mode) {
    case 'host':
      return ['(allow network*)'];
    case 'none':
      return [];
    case 'proxy': {
      const port = network.proxyPort;
      if (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
        throw new AhmaError(
          'CONFIG_INVALID',
          `--network proxy needs the egress proxy's port (an integer 1..65535), got ${String(port)}`,
        );
      }
      return [`(allow network-outbound (remote ip "localhost:${String(port)}"))`];
    }
  }
}

/**
 * The argv that runs `argv` under Seatbelt with `profile`. stderr is merged into stdout by
 * `sh -c 'exec "$@" 2>&1'`, which passes the command's words through "$@" untouched.
 */
export function seatbeltArgv(profile: SeatbeltProfile, argv: readonly string[]): string[] {
  return [
    SANDBOX_EXEC,
    '-p',
    profile.text,
    ...profile.parameters,
    '/bin/sh',
    '-c',
    'exec "$@" 2>&1',
    'sh',
    ...argv,
  ];
}

/**
 * The rules that follow every allow of file reads and writes: one deny per denied path (minus
 * what stays readable inside it), then, for each path left readable inside a denied one, its
 * directories on the way made stat-able (realpath() needs that), and the directories holding a
 * denied path inside a writable root made unmovable (a renamed directory would take the denied
 * path out from under its rule).
 */
function readDenyRules(
  reads: SeatbeltReads,
  writable: readonly { readonly path: string; readonly name: string }[],
  parameters: Parameters,
): string[] {
  // What stays readable inside a denied path, each with the parameter naming it.
  const kept = [
    ...reads.readable.map((path) => ({ path, name: () => parameters.name('READABLE', path) })),
    ...writable.map(({ path, name }) => ({ path, name: () => name })),
  ];
  // Where a command may rename things: the writable roots and the temp folders always writable.
  const roots = [...writable.map(({ path }) => path), ...ALWAYS_WRITABLE];
  const denies: string[] = [];
  const traverse = new Set<string>();
  const protect = new Set<string>();
  for (const deny of reads.denies) {
    const path = resolve(deny.path);
    const dir = dirname(path);
    const name = basename(path);
    if (dir === path) continue; // a deny of "/" would stop every command: never inside a grant
    const glob = /[*?]/.test(name);
    if (!glob && deny.except.some((except) => nameGlob(except).test(name))) continue;
    // The paths left readable inside this one: beneath an entry the glob matches, or the path.
    const inside = kept.filter((keep) =>
      glob ? beneathMatch(dir, keep.path, deny) : isInside(keep.path, path),
    );
    const region = glob
      ? `(regex #"${regexBelow(dir, name)}")`
      : `(subpath (param "${parameters.name('DENY', path)}"))`;
    const exceptions = [
      ...(glob ? deny.except.map((except) => `(regex #"${regexBelow(dir, except)}")`) : []),
      ...inside.map((keep) => `(subpath (param "${keep.name()}"))`),
    ];
    const filter =
      exceptions.length === 0
        ? region
        : `(require-all ${region} ${exceptions.map((f) => `(require-not ${f})`).join(' ')})`;
    denies.push(`(deny file-read* file-write* ${filter})`);
    for (const keep of inside) {
      // The directories between the denied path and the one kept readable inside it.
      for (let at = dirname(keep.path); at !== dirname(at); at = dirname(at)) {
        if (glob ? !isInside(at, dir) || at === dir : !isInside(at, path)) break;
        traverse.add(at);
      }
    }
    // Inside a writable root, the directories holding the denied path stay where they are.
    for (let at = glob ? dir : dirname(path); at !== dirname(at); at = dirname(at)) {
      if (roots.some((root) => isInside(at, root) && at !== root)) protect.add(at);
    }
  }
  return [
    ...denies,
    ...[...traverse].map(
      (path) =>
        `(allow file-read-metadata (literal (param "${parameters.name('TRAVERSE', path)}")))`,
    ),
    ...[...protect].map(
      (path) => `(deny file-write-unlink (literal (param "${parameters.name('PROTECT', path)}")))`,
    ),
  ];
}

/** Whether `path` lies beneath an entry of `dir` that the deny's glob names (and does not except). */
function beneathMatch(dir: string, path: string, deny: DenyEntry): boolean {
  if (!isInside(path, dir) || path === dir) return false;
  const [first = ''] = relative(dir, path).split(sep);
  const excepted = deny.except.some((except) => nameGlob(except).test(first));
  return nameGlob(basename(deny.path)).test(first) && !excepted;
}

/**
 * The regex text (for a #"…" string) matching the entries of `dir` named by `glob` and everything
 * beneath them: `^<dir escaped>/<glob translated>(/.*)?$`.
 */
function regexBelow(dir: string, glob: string): string {
  for (const text of [dir, glob]) carryable(text, join(dir, glob));
  const prefix = dir === '/' ? '' : escapeRegex(dir);
  const name = [...glob]
    .map((char) => (char === '*' ? '[^/]*' : char === '?' ? '[^/]' : escapeRegex(char)))
    .join('');
  const regex = `^${prefix}/${name}(/.*)?$`;
  if (Buffer.byteLength(regex) > MAX_REGEX_BYTES) {
    throw new AhmaError(
      'SANDBOX_UNAVAILABLE',
      `the Seatbelt profile cannot deny reading ${JSON.stringify(join(dir, glob))}: its regex would be longer than sandbox-exec accepts (${String(MAX_REGEX_BYTES)} bytes).`,
    );
  }
  return regex;
}

/**
 * Refuses `text` (part of `path`) when it holds a character a regex in a #"…" string cannot carry:
 * #"…" ends at the first quote, a backslash would be read by the regex, and a control character
 * (a newline) or a lone surrogate could not be matched as the file system spells it.
 */
function carryable(text: string, path: string): void {
  const bad = /["\\\p{Cc}\p{Cs}]/u.exec(text);
  if (bad !== null) {
    throw new AhmaError(
      'SANDBOX_UNAVAILABLE',
      `the Seatbelt profile cannot deny reading ${JSON.stringify(path)}: the path holds ${JSON.stringify(bad[0])}, which a Seatbelt regex cannot carry safely. Rename it, or give Ahma a HOME (or --deny-read path) without it.`,
    );
  }
}

/** `text` matching itself literally in a regex: every character with a meaning there escaped. */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]]/g, '\\$&');
}

/** `path` as given, with its links resolved, and each under /private when it is /tmp, /var, /etc. */
function spellings(path: string): string[] {
  const given = resolve(path);
  return [...new Set([given, realPrefix(given)].flatMap((p) => [p, underPrivate(p)]))];
}

/** The macOS real path of /tmp, /var and /etc (links to /private/…), by name. */
function underPrivate(path: string): string {
  const top = ['/tmp', '/var', '/etc'].find((dir) => isInside(path, dir));
  return top === undefined ? path : `/private${path}`;
}

/** The -D parameters of one profile: a name per (prefix, value), each passed once. */
class Parameters {
  private readonly names = new Map<string, string>();
  private readonly counts = new Map<string, number>();
  readonly argv: string[] = [];

  name(prefix: string, value: string): string {
    const key = `${prefix}\0${value}`;
    const known = this.names.get(key);
    if (known !== undefined) return known;
    const count = this.counts.get(prefix) ?? 0;
    const name = `${prefix}_${String(count)}`;
    this.counts.set(prefix, count + 1);
    this.names.set(key, name);
    this.argv.push('-D', `${name}=${value}`);
    return name;
  }
}
