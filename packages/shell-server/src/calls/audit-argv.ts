// The argv of an audit line (NFR4.3), bounded: a 9 MiB script must not become a 9 MiB log line.
// Each word keeps its head and tail around a marker saying how much was left out; past a total
// budget the remaining words become one marker counting them. The SHA-256 of the full argv keeps
// the exact command identifiable: sha256 over each word's UTF-8 followed by a NUL byte, the layout
// of /proc/PID/cmdline, so `printf '%s\0' WORD… | sha256sum` reproduces it.
import { createHash } from 'node:crypto';

/** Characters (UTF-16 units) kept of one word: its first HEAD and last TAIL. */
const WORD_HEAD = 768;
const WORD_TAIL = 256;
/** Characters of (capped) words kept in all before the rest are dropped. */
const TOTAL_MAX = 8192;

export interface AuditedArgv {
  readonly argv: readonly string[];
  /** True when any word was shortened or dropped. */
  readonly argv_elided: boolean;
  readonly argv_sha256: string;
}

export function auditedArgv(argv: readonly string[]): AuditedArgv {
  const kept: string[] = [];
  let total = 0;
  let elided = false;
  for (const [index, word] of argv.entries()) {
    const capped = capWord(word);
    if (total + capped.length > TOTAL_MAX) {
      kept.push(`…[${String(argv.length - index)} more words elided]`);
      elided = true;
      break;
    }
    if (capped !== word) elided = true;
    kept.push(capped);
    total += capped.length;
  }
  return { argv: kept, argv_elided: elided, argv_sha256: argvSha256(argv) };
}

/** The word itself when short, else head…[N chars elided]…tail. */
function capWord(word: string): string {
  if (word.length <= WORD_HEAD + WORD_TAIL) return word;
  const head = word.slice(0, unsplit(word, WORD_HEAD));
  const tail = word.slice(unsplit(word, word.length - WORD_TAIL));
  const elided = word.length - head.length - tail.length;
  return `${head}…[${String(elided)} chars elided]…${tail}`;
}

/** `index`, moved back by one if it would cut a surrogate pair in two. */
function unsplit(word: string, index: number): number {
  const code = word.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

function argvSha256(argv: readonly string[]): string {
  const hash = createHash('sha256');
  for (const word of argv) {
    hash.update(word, 'utf8');
    hash.update('\0');
  }
  return hash.digest('hex');
}
