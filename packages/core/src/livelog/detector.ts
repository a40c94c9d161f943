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

export function openAiDetector(options: OpenAiDetectorOptions): Detector {
  const url = `${options.baseUrl}/chat/completions`;
  const redact = (text: string) =>
    options.apiKey === undefined || options.apiKey === ''
      ? text
      : text.replaceAll(options.apiKey, '[redacted]');
  return {
    async check(chunk, signal) {
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
        throw new DetectorError(redact(`could not reach ${url}: ${describeFetchError(error)}`));
      }
      if (!response.ok) {
        throw new DetectorError(
          redact(`${url} answered HTTP ${String(response.status)}: ${oneLine(body, 200)}`),
        );
      }
      const content = replyContent(body);
      if (content === undefined) {
        throw new DetectorError(
          redact(`${url} sent no choices[0].message.content: ${oneLine(body, 200)}`),
        );
      }
      if (isClean(content)) return { clean: true };
      const summary = content.trim();
      return {
        clean: false,
        summary:
          summary.length > MAX_SUMMARY_CHARS
            ? `${summary.slice(0, MAX_SUMMARY_CHARS)} […]`
            : summary,
      };
    },
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
