// The issue detector of livelog tools: one chunk of output and the tool's detection prompt go to
// an OpenAI-compatible `POST {base_url}/chat/completions`; a reply other than CLEAN describes an
// issue. Injected into the monitor (a test can give it another), real in the server.

/** What the endpoint said about one chunk. */
export type Verdict =
  { readonly clean: true } | { readonly clean: false; readonly summary: string };

export interface Detector {
  /** Rejects with a DetectorError when the endpoint cannot answer (down, slow, bad reply). */
  check(chunk: string, signal: AbortSignal): Promise<Verdict>;
}

/** The endpoint failed; the message is safe to show (no key, bounded). */
export class DetectorError extends Error {}

export interface OpenAiDetectorOptions {
  /** Without a trailing "/". */
  readonly baseUrl: string;
  readonly model: string;
  readonly detectionPrompt: string;
  /** Sent as "Authorization: Bearer …" when given; never part of a message. */
  readonly apiKey: string | undefined;
  readonly timeoutMs: number;
}

/** Longest reply read from the endpoint; a bigger one is an error, not a memory hazard. */
const MAX_REPLY_BYTES = 1024 * 1024;
/** Longest summary kept from a reply. */
export const MAX_SUMMARY_CHARS = 2000;

// The detection prompt says what to look for; this says how to answer, so that any model an
// OpenAI-compatible server offers can be used without a prompt written for it.
const ANSWER_RULES =
  'You check recent log output for issues. Answer with the single word CLEAN when the output shows no issue matching the criteria below. Otherwise answer with a brief plain-English summary (1-3 sentences) of the issue, quoting the most relevant lines. No other text.';

/** A reply meaning "no issue": CLEAN, in any case, alone or followed by punctuation or words. */
export function isClean(reply: string): boolean {
  return /^clean\b/i.test(reply.trim());
}

/** Shortest piece of the key that is redacted wherever it appears (the whole key when shorter). */
export const REDACTED_KEY_PREFIX = 8;

/**
 * Removes the API key from a text: every occurrence of its first REDACTED_KEY_PREFIX characters,
 * with as much of the rest of the key as follows them, becomes "[redacted]". A piece is enough to
 * match, so a key an endpoint echoes in part (or a text cut inside the key) is caught too.
 */
export function keyRedactor(apiKey: string | undefined): (text: string) => string {
  if (apiKey === undefined || apiKey === '') return (text) => text;
  const prefix = apiKey.slice(0, REDACTED_KEY_PREFIX);
  return (text) => {
    let out = '';
    let from = 0;
    for (;;) {
      const at = text.indexOf(prefix, from);
      if (at === -1) return out + text.slice(from);
      let end = at + prefix.length;
      while (end < text.length && end - at < apiKey.length && text[end] === apiKey[end - at]) end++;
      out += `${text.slice(from, at)}[redacted]`;
      from = end;
    }
  };
}

export function openAiDetector(options: OpenAiDetectorOptions): Detector {
  const redact = keyRedactor(options.apiKey);
  const check = uncheckedDetector(options, redact);
  return {
    // Every text that leaves the detector (a summary becomes an alert and a log line, an error a
    // report and a log line) is redacted; an unexpected error too, not only a DetectorError.
    async check(chunk, signal) {
      let verdict: Verdict;
      try {
        verdict = await check(chunk, signal);
      } catch (error) {
        throw new DetectorError(redact(error instanceof Error ? error.message : String(error)));
      }
      return verdict.clean ? verdict : { clean: false, summary: redact(verdict.summary) };
    },
  };
}

/**
 * The endpoint call. Bodies are redacted before they are cut to a bounded length, so the cut can
 * never leave a piece of the key too short to be recognised.
 */
function uncheckedDetector(
  options: OpenAiDetectorOptions,
  redact: (text: string) => string,
): (chunk: string, signal: AbortSignal) => Promise<Verdict> {
  const url = `${options.baseUrl}/chat/completions`;
  return async (chunk, signal) => {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    let response: Response;
    let body: string;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey === undefined || options.apiKey === ''
            ? {}
            : { authorization: `Bearer ${options.apiKey}` }),
        },
        body: JSON.stringify({
          model: options.model,
          messages: [
            {
              role: 'system',
              content: `${ANSWER_RULES}\n\nCriteria:\n${options.detectionPrompt}`,
            },
            { role: 'user', content: chunk },
          ],
          temperature: 0,
          max_tokens: 256,
          stream: false,
        }),
        // The key must never follow a redirect to another host.
        redirect: 'error',
        signal: AbortSignal.any([signal, timeout]),
      });
      body = await readBounded(response);
    } catch (error) {
      if (signal.aborted) throw new DetectorError('the monitor stopped');
      if (timeout.aborted) {
        throw new DetectorError(
          `${url} did not answer within ${String(options.timeoutMs / 1000)} s (llm_timeout_seconds)`,
        );
      }
      throw new DetectorError(`could not reach ${url}: ${describeFetchError(error)}`);
    }
    if (!response.ok) {
      throw new DetectorError(
        `${url} answered HTTP ${String(response.status)}: ${oneLine(redact(body), 200)}`,
      );
    }
    const content = replyContent(body);
    if (content === undefined) {
      throw new DetectorError(
        `${url} sent no choices[0].message.content: ${oneLine(redact(body), 200)}`,
      );
    }
    if (isClean(content)) return { clean: true };
    const summary = redact(content).trim();
    return {
      clean: false,
      summary:
        summary.length > MAX_SUMMARY_CHARS ? `${summary.slice(0, MAX_SUMMARY_CHARS)} […]` : summary,
    };
  };
}

function replyContent(body: string): string | undefined {
  try {
    const reply = JSON.parse(body) as { choices?: { message?: { content?: unknown } }[] };
    const content = reply.choices?.[0]?.message?.content;
    return typeof content === 'string' ? content : undefined;
  } catch {
    return undefined;
  }
}

async function readBounded(response: Response): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel();
      throw new Error(`the reply is larger than ${String(MAX_REPLY_BYTES)} bytes`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** fetch says "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, …) is in its cause. */
function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code === undefined ? cause.message : `${code} (${cause.message})`;
  }
  return error.message;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat || '(empty body)';
}
