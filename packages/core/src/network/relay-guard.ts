// The relay guard (R7.17): what a client sends into a CONNECT tunnel, read while it is plaintext.
// An allowed destination that is itself a proxy would carry the client on to any host (the
// anthropics/claude-code#87381 bypass: a direct CONNECT is refused, a CONNECT sent through an
// allowed relay is not). So a request line inside the tunnel that asks a proxy for another
// destination, a CONNECT or an absolute-form target (`GET http://…`, any `scheme://`), ends the
// tunnel, as does HTTP/2 in clear text (the `PRI *` preface or `Upgrade: h2c`), whose binary frames
// could carry such a request where no line can be read. A stream that opens with a TLS record
// (0x16) is encrypted from there on and no longer read. Matching is generous (any case, leading
// blanks, CR or LF alone ends a line): a false alarm ends one tunnel; a miss lets a command past
// the allowlist.
//
// The start of a line that could still become such a request is held back until it is decided, so
// no byte of it reaches the upstream before the check; what is held is bounded (a method of at
// most MAX_METHOD bytes, an Upgrade line of MAX_HEADER_LINE), so memory stays bounded whatever the stream.

/** A relay request found in a tunnel: what it asked for, for the refusal's reason. */
export interface RelayMatch {
  /** `a CONNECT to 10.0.0.1:443`, `a GET for http://example.com/`, `an HTTP/2 cleartext upgrade`. */
  readonly what: string;
}

export type GuardVerdict = { readonly forward: Buffer } | { readonly relay: RelayMatch };

type LineVerdict = 'innocent' | 'undecided' | RelayMatch;

const TLS_HANDSHAKE = 0x16;
// Generous bounds, for lenient parsers (extension methods of any length, runs of blanks); past
// them a line is no request line a proxy would read.
const MAX_BLANKS = 256;
const MAX_METHOD = 1024;
const MAX_SCHEME = 16;
const MAX_HEADER_LINE = 8192;
/** How much of a relay request's target is awaited for the refusal's message. */
const MAX_WORD_WAIT = 256;
const EMPTY = Buffer.alloc(0);

const isBreak = (byte: number | undefined) => byte === 0x0a || byte === 0x0d;
const isBlank = (byte: number | undefined) => byte === 0x20 || byte === 0x09;
/** RFC 9110 tchar: what a method (or a header name) is made of. */
const isTokenChar = (byte: number) =>
  (byte >= 0x30 && byte <= 0x39) ||
  (byte >= 0x41 && byte <= 0x5a) ||
  (byte >= 0x61 && byte <= 0x7a) ||
  "!#$%&'*+-.^_`|~".includes(String.fromCharCode(byte));
const isSchemeChar = (byte: number) =>
  (byte >= 0x30 && byte <= 0x39) ||
  (byte >= 0x41 && byte <= 0x5a) ||
  (byte >= 0x61 && byte <= 0x7a) ||
  byte === 0x2b ||
  byte === 0x2d ||
  byte === 0x2e;

/** Printable ASCII of `bytes` for a message, at most 120 characters. */
function printable(bytes: Buffer): string {
  const text = bytes.subarray(0, 120).toString('latin1');
  return text.replace(/[^\x21-\x7e]/g, '?');
}

/** The word of `line` starting at `from`: up to the next blank or the line's end. */
function wordAt(line: Buffer, from: number): Buffer {
  let end = from;
  while (end < line.length && !isBlank(line[end])) end++;
  return line.subarray(from, end);
}

/** Whether the word of `line` at `from` is all there (or long enough to name in a message). */
function wholeWord(line: Buffer, from: number, complete: boolean): boolean {
  return complete || from + wordAt(line, from).length < line.length || line.length > MAX_WORD_WAIT;
}

/**
 * What one line (from its first byte up to, not including, its break) is. `complete`: the line
 * ended (a break followed, or the stream did); otherwise more of it may come and 'undecided' says
 * the bytes so far could still start a relay request.
 */
function classify(line: Buffer, complete: boolean): LineVerdict {
  const more: LineVerdict = complete ? 'innocent' : 'undecided';
  let at = 0;
  while (isBlank(line[at])) if (++at > MAX_BLANKS) return 'innocent';
  const start = at;
  while (at < line.length && isTokenChar(line[at] ?? 0))
    if (++at - start > MAX_METHOD) return 'innocent';
  if (at === line.length) return more;
  if (at === start) return 'innocent';
  const method = line.subarray(start, at).toString('latin1');
  const upper = method.toUpperCase();

  // A header line: only `Upgrade: … h2c …` matters, and the whole line is needed to know.
  let colon = at;
  while (isBlank(line[colon])) colon++;
  if (upper === 'UPGRADE' && (line[colon] === 0x3a || colon === line.length)) {
    if (!complete)
      return line.length > MAX_HEADER_LINE ? { what: 'an over-long Upgrade header' } : 'undecided';
    if (line[colon] !== 0x3a) return 'innocent';
    return /h2c/i.test(line.subarray(colon + 1).toString('latin1'))
      ? { what: 'an HTTP/2 cleartext upgrade (Upgrade: h2c)' }
      : 'innocent';
  }

  if (!isBlank(line[at])) return 'innocent';
  while (isBlank(line[at])) if (++at - start > MAX_METHOD + MAX_BLANKS) return 'innocent';
  if (at === line.length) return more;
  if (upper === 'CONNECT') {
    // Decided already; the rest of the target is awaited only for the message.
    if (!wholeWord(line, at, complete)) return 'undecided';
    return { what: `a CONNECT to ${printable(wordAt(line, at))}` };
  }
  if (upper === 'PRI') {
    return line[at] === 0x2a ? { what: 'an HTTP/2 cleartext preface (PRI *)' } : 'innocent';
  }

  // An absolute-form target: scheme "://".
  const schemeStart = at;
  while (at < line.length && isSchemeChar(line[at] ?? 0)) {
    if (++at - schemeStart > MAX_SCHEME) return 'innocent';
  }
  if (at === schemeStart || !/[a-z]/i.test(String.fromCharCode(line[schemeStart] ?? 0))) {
    return 'innocent';
  }
  const separator = '://';
  for (let index = 0; index < separator.length; index++) {
    if (at + index === line.length) return more;
    if (line[at + index] !== separator.charCodeAt(index)) return 'innocent';
  }
  if (!wholeWord(line, schemeStart, complete)) return 'undecided';
  return {
    what: `a ${printable(Buffer.from(method))} for ${printable(wordAt(line, schemeStart))}`,
  };
}

/** The index of the first CR or LF in `data` from `from`, or -1. */
function nextBreak(data: Buffer, from: number): number {
  for (let index = from; index < data.length; index++) if (isBreak(data[index])) return index;
  return -1;
}

/** One tunnel's guard: feed it the client's bytes in order; forward what it gives back. */
export class RelayGuard {
  private state: 'first' | 'reading' | 'off' = 'first';
  /** The undecided start of the current line (held back from the upstream). */
  private held: Buffer = EMPTY;
  /** The rest of the current line is decided innocent. */
  private innocentLine = false;

  /** What of `chunk` (and of the bytes held before it) may go to the upstream, or the relay request it makes. */
  feed(chunk: Buffer): GuardVerdict {
    if (this.state === 'off' || chunk.length === 0) return { forward: chunk };
    if (this.state === 'first') {
      this.state = chunk[0] === TLS_HANDSHAKE ? 'off' : 'reading';
      if (this.state === 'off') return { forward: chunk };
    }
    const data = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    this.held = EMPTY;
    return this.scan(data, false);
  }

  /** At the end of the client's stream: the held bytes, or the relay request they make as a last line. */
  end(): GuardVerdict {
    const data = this.held;
    this.held = EMPTY;
    return data.length === 0 ? { forward: EMPTY } : this.scan(data, true);
  }

  private scan(data: Buffer, atEnd: boolean): GuardVerdict {
    let at = 0;
    while (at < data.length) {
      if (this.innocentLine) {
        const lineBreak = nextBreak(data, at);
        if (lineBreak < 0) return { forward: data };
        this.innocentLine = false;
        at = lineBreak + 1;
        continue;
      }
      if (isBreak(data[at])) {
        at++;
        continue;
      }
      const lineBreak = nextBreak(data, at);
      const line = data.subarray(at, lineBreak < 0 ? data.length : lineBreak);
      const verdict = classify(line, lineBreak >= 0 || atEnd);
      if (verdict === 'undecided') {
        this.held = Buffer.from(line);
        return { forward: data.subarray(0, at) };
      }
      if (verdict !== 'innocent') return { relay: verdict };
      if (lineBreak < 0) {
        this.innocentLine = true;
        return { forward: data };
      }
      at = lineBreak + 1;
    }
    return { forward: data };
  }
}
