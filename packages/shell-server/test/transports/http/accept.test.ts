// R8A: the choice between one JSON body and an SSE stream, from Accept alone.
import { describe, expect, it } from 'vitest';
import { prefersSse } from '../../../src/transports/http/accept.js';

describe('prefersSse', () => {
  it('R8A.7: no Accept, */*, application/json and types it cannot serve mean JSON', () => {
    for (const accept of [
      undefined,
      '',
      '*/*',
      'application/json',
      'text/html',
      'application/*',
      'text/*',
    ]) {
      expect(prefersSse(accept), String(accept)).toBe(false);
    }
  });

  it('R8A.2: text/event-stream named by the client, alone or as much wanted as JSON, means SSE', () => {
    for (const accept of [
      'text/event-stream',
      'application/json, text/event-stream',
      'text/event-stream, application/json',
      'Text/Event-Stream',
      'application/json;q=0.5, text/event-stream',
      'text/event-stream;q=0.9, */*;q=0.8',
    ]) {
      expect(prefersSse(accept), accept).toBe(true);
    }
  });

  it('R8A.3: JSON preferred by weight, or SSE refused (q=0), means JSON', () => {
    for (const accept of [
      'application/json, text/event-stream;q=0.5',
      'text/event-stream;q=0',
      'text/event-stream;q=0.2, */*',
      'text/event-stream; q=nonsense, application/json',
    ]) {
      expect(prefersSse(accept), accept).toBe(false);
    }
  });
});
