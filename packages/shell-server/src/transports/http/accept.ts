// R8A: whether a POST is answered with an SSE stream or one JSON body, from the client's Accept.
// SSE only when the client names text/event-stream itself and prefers it at least as much as JSON
// (every spec-conformant client lists both with equal weight, and SSE is what carries the progress
// heartbeats of a call kept open); JSON for application/json alone, for `*/*`, for no Accept at all
// and for anything else: a client that did not ask for a stream may not know how to read one, and
// no Accept is refused (never 406).

/** True when the POST's answer should be an SSE stream, false for one JSON body. */
export function prefersSse(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const ranges = parseAccept(accept);
  const sse = ranges.find((range) => range.type === 'text/event-stream');
  if (sse === undefined || sse.q <= 0) return false;
  return sse.q >= quality(ranges, 'application', 'json');
}

interface MediaRange {
  readonly type: string;
  readonly q: number;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((piece) => piece.trim());
      const qParam = params.find((param) => /^q\s*=/i.test(param));
      const q = qParam === undefined ? 1 : Number(qParam.replace(/^q\s*=\s*/i, ''));
      return { type: type.toLowerCase(), q: Number.isFinite(q) ? q : 0 };
    })
    .filter((range) => range.type !== '');
}

/** The weight the most specific matching range gives `type/subtype` (RFC 9110 §12.5.1). */
function quality(ranges: readonly MediaRange[], type: string, subtype: string): number {
  for (const candidate of [`${type}/${subtype}`, `${type}/*`, '*/*']) {
    const range = ranges.find((r) => r.type === candidate);
    if (range !== undefined) return range.q;
  }
  return 0;
}
