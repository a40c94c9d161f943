// R7.13: a refused read or write explained in the tool result. A program the sandbox refuses
// prints only "Permission denied" (or "Read-only file system" for a protected hand-off file); an
// agent reading that cannot tell the sandbox from file modes. This finds the refusals in a
// command's output, takes the paths they name, and for each path the sandbox's own rules refused
// says which rule and how to allow it. A path the rules allow gets nothing: the refusal came from
// file permissions, and a hint would be a guess.
//
// Landlock refuses with EACCES and never refuses stat, access or a walk through a directory;
// Seatbelt (macOS) refuses writes with EPERM and allows every read. EROFS comes from a read-only
// mount: only the hand-off protection can explain it.
import { lstatSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isInside } from '../paths/inside.js';
import { realPrefix } from '../paths/real-sync.js';
import {
  deniedBy,
  expandHome,
  usableHome,
  PRIVATE_STATE_LIST,
  type DenyEntry,
  type Grant,
  type ReadPolicy,
} from './read-policy.js';
import type { Sandbox } from './sandbox.js';

export interface RefusalContext {
  /** The command's working directory: relative paths in the output are resolved against it. */
  readonly cwd: string;
  /** The server's HOME (`~/` in the output, and how paths under it are shown). */
  readonly home: string | undefined;
  readonly sandbox: Pick<Sandbox, 'mechanism' | 'policy' | 'writable' | 'scope' | 'cacheRoot'>;
  /** The temp directory commands may write, to name it in a hint. */
  readonly tempDir?: string | undefined;
  /**
   * The hand-off protection's explanation of a refused path (absolute, as spelled), or undefined
   * when the path is not one it protects.
   */
  readonly explainHandoff?: ((path: string) => string | undefined) | undefined;
}

/** At most this many hints: an agent needs the first few, not one per file of a failed build. */
export const MAX_HINTS = 5;
/** At most this many distinct paths are looked at (each costs a few system calls). */
const MAX_PATHS = 64;
/** Longer lines are not read: no refusal message is this long. */
const MAX_LINE = 4096;

/** The devices every command may read and write (native/landlock.c, seatbelt.ts). */
const LINUX_DEVICES = [
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/random',
  '/dev/urandom',
  '/dev/tty',
  '/dev/shm',
];
const DARWIN_WRITABLE = ['/private/tmp', '/private/var/folders', '/dev/null', '/dev/zero'];

type Errno = 'EACCES' | 'EPERM' | 'EROFS';
/** What the refused call did, as far as the message says; `stat`: a call Landlock never refuses. */
type Kind = 'read' | 'write' | 'stat' | 'unknown';

/** One refusal found in the output: a path it names, the error, and what was being done. */
export interface Refusal {
  readonly path: string;
  readonly errno: Errno;
  readonly kind: Kind;
}

const ANY_REFUSAL =
  /permission denied|operation not permitted|read-only file system|device or resource busy|\bE(?:ACCES|PERM|ROFS|BUSY)\b|os error (?:1|13|16|30)\b|\[Errno (?:1|13|16|30)\]/i;
/** A read-only mount, or renaming onto or over a mount point (EBUSY): only hand-off files here. */
const EROFS =
  /read-only file system|device or resource busy|\bE(?:ROFS|BUSY)\b|os error (?:16|30)\b|\[Errno (?:16|30)\]/i;
const EPERM = /operation not permitted|\bEPERM\b|os error 1\b|\[Errno 1\]/i;
/** The words of the error itself, where the path usually stands just before (`cat: /x: …`). */
const ERROR_WORDS =
  /: (?:permission denied|operation not permitted|read-only file system|device or resource busy)\b|: \[Errno (?:1|13|16|30)\]/i;
/** Rust's io::Error on a line of its own (cargo's `Caused by:`): the path is on a line above. */
const BARE_RUST_ERROR =
  /^\s*(?:caused by:\s*)?(?:permission denied|operation not permitted|read-only file system) \(os error (?:1|13|30)\)\s*$/i;

const WRITE_WORDS =
  /\b(?:cannot|can't|couldn't|could not|failed to|unable to)\s+(?:touch|create|make|mkdir|remove|delete|unlink|move|rename|write|lock|overwrite|open output|open temporary|copy|link|truncate|save|set)\b|\bcannot mkdir\b|(?:^|: )(?:mkdir|rename|remove|unlink|symlink|link|rmdir) [^\s:]|, (?:mkdir|rename|unlink|rmdir|symlink|link|copyfile|mkdtemp|utime|utimes|chmod|chown|rm|cp|write|writev|ftruncate|truncate)\b|\bfor writing\b|read-only file system|\bEROFS\b|os error 30\b|\[Errno 30\]/i;
const READ_WORDS =
  /\b(?:cannot|can't|couldn't|could not|failed to|unable to)\s+(?:open directory|read|list|open file for reading)\b|, (?:scandir|opendir|readdir|read|readlink)\b|\bfor reading\b/i;
/** Calls Landlock does not refuse: a refusal here came from the file's modes. */
const STAT_WORDS =
  /\b(?:cannot|can't|couldn't|could not|failed to|unable to)\s+(?:access|stat)\b|, (?:stat|lstat|access|faccessat)\b/i;

/** Quote characters and the one each closes with. */
const QUOTES: Readonly<Record<string, string>> = {
  "'": "'",
  '"': '"',
  '`': '`',
  '‘': '’',
  '“': '”',
};
/** An unquoted absolute or `~/` path, ended by a space, a quote, a comma or `: `. */
const BARE_PATH = /(?:^|[\s=(])((?:~|\.{1,2})?\/[^\s'"`‘’“”,;()]*?)(?=:\s|:$|[\s'"`‘’“”,;()]|$)/g;

/**
 * The refusals `output` shows, in order, each path once (at most MAX_PATHS of them). Exported for
 * tests; refusalHints is what explains them.
 */
export function findRefusals(output: string): Refusal[] {
  if (!ANY_REFUSAL.test(output)) return [];
  const found = new Map<string, Refusal>();
  const lines = output.split('\n');
  for (let index = 0; index < lines.length && found.size < MAX_PATHS; index++) {
    const line = lines[index] ?? '';
    if (line.length > MAX_LINE || !ANY_REFUSAL.test(line)) continue;
    const errno: Errno = EROFS.test(line) ? 'EROFS' : EPERM.test(line) ? 'EPERM' : 'EACCES';
    let source = line;
    let paths = pathsOnLine(line);
    if (paths.length === 0 && BARE_RUST_ERROR.test(line)) {
      // `failed to create directory `/x``, a blank line, `Caused by:`, then the error.
      for (let back = index - 1; back >= Math.max(0, index - 4); back--) {
        const above = lines[back] ?? '';
        if (above.length > MAX_LINE) break;
        const quoted = [...above.matchAll(/`([^`\n]{1,4096})`/g)].flatMap((match) =>
          match[1] === undefined ? [] : [match[1]],
        );
        if (quoted.length > 0) {
          source = above;
          paths = quoted;
          break;
        }
      }
    }
    const kind = kindOf(source, errno);
    for (const path of paths) {
      if (!found.has(path)) found.set(path, { path, errno, kind });
    }
  }
  return [...found.values()].slice(0, MAX_PATHS);
}

function kindOf(line: string, errno: Errno): Kind {
  if (errno === 'EROFS') return 'write';
  if (STAT_WORDS.test(line)) return 'stat';
  if (WRITE_WORDS.test(line)) return 'write';
  if (READ_WORDS.test(line)) return 'read';
  return 'unknown';
}

/** The path-like words of a refusal line: quoted ones, the one before `: Permission denied`, bare ones. */
function pathsOnLine(line: string): string[] {
  const paths: string[] = [];
  const add = (candidate: string | undefined) => {
    const path = candidate?.trim();
    if (path !== undefined && path !== '' && !paths.includes(path)) paths.push(path);
  };
  for (const quoted of quotedOn(line)) add(quoted);
  // `prog: [what: ]PATH: Permission denied`: the last segment before the error words.
  const error = ERROR_WORDS.exec(line);
  if (error !== null) {
    const segments = line.slice(0, error.index).split(': ');
    const last = segments.at(-1)?.trim() ?? '';
    if (!/['"`‘’“”]/.test(last)) {
      if (!/\s/.test(last)) {
        // A bare name is a path only after a program's name (`cat: notes.txt: …`), and not an
        // error code (`Error: EACCES: permission denied, open '/x'`).
        if ((segments.length >= 2 && !/^E[A-Z]+$/.test(last)) || looksLikePath(last)) add(last);
      } else {
        const word = last.split(/\s+/).at(-1) ?? '';
        if (looksLikePath(word)) add(word);
      }
    }
  }
  // Unquoted paths elsewhere on the line, but not a program named at its start (`/usr/bin/ld: …`).
  for (const match of line.matchAll(BARE_PATH)) {
    const path = match[1];
    if (path === undefined || !looksLikePath(path)) continue;
    const at = match.index + match[0].indexOf(path);
    if (at === line.search(/\S/) && line.startsWith(': ', at + path.length)) continue;
    add(path.replace(/[.:]+$/, ''));
  }
  return paths;
}

/** The quoted strings of a line, left to right, in one pass (a quote never closed ends none). */
function quotedOn(line: string): string[] {
  const found: string[] = [];
  const unclosed = new Set<string>();
  for (let at = 0; at < line.length; at++) {
    const open = line[at] ?? '';
    const close = QUOTES[open];
    if (close === undefined || unclosed.has(open)) continue;
    // An apostrophe (`can't`, `couldn't`) opens nothing.
    if (open === "'" && /\p{L}/u.test(line[at - 1] ?? '')) continue;
    const end = line.indexOf(close, at + 1);
    if (end < 0) {
      unclosed.add(open);
      continue;
    }
    if (end > at + 1) found.push(line.slice(at + 1, end));
    at = end;
  }
  return found;
}

function looksLikePath(word: string): boolean {
  return word.length > 1 && (word.includes('/') || word.startsWith('~'));
}

/**
 * One line per refused path the sandbox's rules explain (at most MAX_HINTS), for a command that
 * failed with `output`. Nothing for a path the rules allow, or a refusal they cannot have made.
 */
export function refusalHints(output: string, context: RefusalContext): string[] {
  return explainRefusals(output, context).hints;
}

/** The hints, and the paths (absolute) refused for writing outside every writable path (R7.18). */
export interface Explained {
  readonly hints: string[];
  readonly writes: string[];
}

export function explainRefusals(output: string, context: RefusalContext): Explained {
  const { mechanism } = context.sandbox;
  if (mechanism === 'none') return { hints: [], writes: [] };
  const hints: string[] = [];
  const writes: string[] = [];
  const seen = new Set<string>();
  for (const refusal of findRefusals(output)) {
    if (hints.length >= MAX_HINTS) break;
    const absolute = absolutePath(refusal.path, context);
    if (absolute === undefined) continue;
    const real = realPrefix(absolute);
    if (seen.has(real)) continue;
    seen.add(real);
    const explained = explain(refusal, absolute, real, context);
    if (explained === undefined) continue;
    if (!hints.includes(explained.hint)) hints.push(explained.hint);
    if (explained.outsideWritable) writes.push(absolute);
  }
  return { hints, writes };
}

interface Explanation {
  readonly hint: string;
  /** A write refused because the path lies outside every writable path (a grant could allow it). */
  readonly outsideWritable?: boolean;
}

function explain(
  refusal: Refusal,
  absolute: string,
  real: string,
  context: RefusalContext,
): Explanation | undefined {
  const handoff = context.explainHandoff?.(absolute);
  if (handoff !== undefined && handoff !== '') return { hint: handoff };
  // A read-only mount other than the hand-off protection is not the sandbox's doing.
  if (refusal.errno === 'EROFS' || refusal.kind === 'stat') return undefined;
  const shown = `\`${display(absolute, context.home)}\``;
  const { policy, mechanism } = context.sandbox;

  if (mechanism === 'seatbelt') {
    // Seatbelt refuses writes outside the writable paths with EPERM, and no read.
    if (refusal.errno !== 'EPERM' || refusal.kind === 'read') return undefined;
    if (writableBy(policy, real, DARWIN_WRITABLE)) return undefined;
    return { hint: writeHint(shown, context), outsideWritable: true };
  }
  // Landlock refuses with EACCES; an EPERM is a capability or ownership matter.
  if (refusal.errno !== 'EACCES') return undefined;
  // Ahma's own state is never reachable, whatever the command tried.
  const deny = deniedBy(policy.denies, real) ?? deniedBy(policy.denies, absolute);
  if (deny?.list === PRIVATE_STATE_LIST) return { hint: denyHint(shown, absolute, deny, context) };
  let kind = refusal.kind;
  if (kind === 'unknown') {
    // A refusal naming a path that does not exist was a creation; one that exists, a read (a write
    // to an existing file refused by its modes is indistinguishable, and gets no hint).
    const exists = existence(absolute);
    if (exists === undefined) return undefined;
    kind = exists ? 'read' : 'write';
  }
  if (kind === 'read') {
    if (readableBy(policy, real)) return undefined;
    if (deny === undefined) return { hint: readHint(shown, absolute, context) };
    return { hint: denyHint(shown, absolute, deny, context) };
  }
  if (writableBy(policy, real, LINUX_DEVICES)) return undefined;
  // Inside a writable path but denied there (a scope that holds ~/.aws): the deny list explains it.
  const inWritable = policy.grants.some(
    (grant) => grant.access === 'write' && isInside(real, realGrant(grant)),
  );
  if (inWritable && deny !== undefined) return { hint: denyHint(shown, absolute, deny, context) };
  return { hint: writeHint(shown, context), outsideWritable: true };
}

function denyHint(
  shown: string,
  absolute: string,
  { list, why }: DenyEntry,
  context: RefusalContext,
): string {
  if (list === PRIVATE_STATE_LIST) {
    return `${shown} is ${PRIVATE_STATE_LIST}: commands can never read or write it.`;
  }
  if (list === '--deny-read') {
    return `${shown} is denied by --deny-read: commands cannot read it. If this tool needs it, restart Ahma without that --deny-read.`;
  }
  return `${shown} is in ${list} (${why}): commands cannot read it. If this tool needs it, restart Ahma with --allow-read ${shellWord(display(absolute, context.home))}.`;
}

function readHint(shown: string, absolute: string, context: RefusalContext): string {
  const home = context.home !== undefined && isAbsolute(context.home) ? ' and HOME' : '';
  return `${shown} is outside what commands may read (the system, the scope, the temp directory, the caches${home}): --allow-read ${shellWord(display(absolute, context.home))} adds it.`;
}

function writeHint(shown: string, context: RefusalContext): string {
  return `${shown} is outside the writable paths (${describeWritable(context)}): commands can write only there; --allow-write PATH adds one.`;
}

/** The writable paths by what they are: the scope, the temp directory, the caches, the others. */
function describeWritable(context: RefusalContext): string {
  const { scope, writable, cacheRoot } = context.sandbox;
  const temp = context.tempDir === undefined ? undefined : realPrefix(context.tempDir);
  const realScope = realPrefix(scope);
  const named = writable.flatMap((path) => {
    if (path === realScope || path === scope) return [`the scope ${display(scope, context.home)}`];
    if (path === cacheRoot) return [];
    if (path === temp) return [`the temp directory ${display(path, context.home)}`];
    return [display(path, context.home)];
  });
  if (writable.includes(cacheRoot)) named.push("Ahma's caches");
  return named.length > 5 ? `${named.slice(0, 5).join(', ')}, …` : named.join(', ');
}

/** Whether the policy lets commands read `real`: a grant holds it, no deny within that grant does. */
function readableBy(policy: ReadPolicy, real: string): boolean {
  if (LINUX_DEVICES.some((device) => isInside(real, device))) return true;
  return policy.grants.some((grant) => grant.access !== 'list' && grantHolds(policy, grant, real));
}

/** Whether the policy (and `implicit`) lets commands write `real`. */
function writableBy(policy: ReadPolicy, real: string, implicit: readonly string[]): boolean {
  if (implicit.some((path) => isInside(real, path))) return true;
  return policy.grants.some((grant) => grant.access === 'write' && grantHolds(policy, grant, real));
}

/** A grant holds a path beneath it unless a deny lying within it denies the path (coverRules). */
function grantHolds(policy: ReadPolicy, grant: Grant, real: string): boolean {
  const root = realGrant(grant);
  if (!isInside(real, root)) return false;
  const within = policy.denies.filter((deny) => isInside(dirname(deny.path), root));
  return within.length === 0 || deniedBy(within, real) === undefined;
}

const realGrants = new WeakMap<Grant, string>();

function realGrant(grant: Grant): string {
  let real = realGrants.get(grant);
  if (real === undefined) {
    real = realPrefix(grant.path);
    realGrants.set(grant, real);
  }
  return real;
}

/** `path` made absolute: `~/` under HOME, relative against the working directory. */
function absolutePath(path: string, context: RefusalContext): string | undefined {
  if (path === '~' || path.startsWith('~/')) return expandHome(path, context.home);
  if (path.startsWith('~')) return undefined; // another user's HOME: not resolvable here
  return resolve(context.cwd, path);
}

/** True or false when the server can tell whether `path` exists; undefined when it cannot. */
function existence(path: string): boolean | undefined {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? false : undefined;
  }
}

/** `path` with HOME shown as `~`. */
function display(path: string, given: string | undefined): string {
  const home = usableHome(given);
  if (home === undefined) return path;
  if (path === resolve(home)) return '~';
  return isInside(path, home) ? `~/${path.slice(resolve(home).length + 1)}` : path;
}

/** A word to paste into a shell: as is when safe, else single-quoted (after a leading `~/`). */
function shellWord(path: string): string {
  if (/^[\w@%+=:,./~-]+$/.test(path)) return path;
  const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
  return path.startsWith('~/') ? `~/${quote(path.slice(2))}` : quote(path);
}
