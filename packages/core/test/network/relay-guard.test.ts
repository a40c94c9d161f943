// R7.17: the relay guard of a CONNECT tunnel: a CONNECT, an absolute-form request or HTTP/2 in
// clear text inside the tunnel is found at the start of the stream or of any line, however the
// bytes are split, before any byte of it is forwarded; anything else goes on at once (binary data
// is not held), and a stream opening with a TLS record is not read.
import { describe, expect, it } from 'vitest';
import { RelayGuard, type GuardVerdict } from '../../src/network/relay-guard.js';

/** What the guard forwards of `chunks` fed in order (then the end), and the relay it found. */
function run(
  chunks: readonly (string | Buffer)[],
  end = true,
): { forwarded: string; relay?: string } {
  const guard = new RelayGuard();
  let forwarded = '';
  const take = (verdict: GuardVerdict) => {
    if ('relay' in verdict) return verdict.relay.what;
    forwarded += verdict.forward.toString('latin1');
    return undefined;
  };
  for (const chunk of chunks) {
    const relay = take(
      guard.feed(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk),
    );
    if (relay !== undefined) return { forwarded, relay };
  }
  const relay = end ? take(guard.end()) : undefined;
  return relay === undefined ? { forwarded } : { forwarded, relay };
}

const INNOCENT = 'GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n';

describe('RelayGuard', () => {
  it.each([
    ['CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n', 'a CONNECT to 10.0.0.1:443'],
    ['connect evil.example:22 HTTP/1.1\r\n', 'a CONNECT to evil.example:22'],
    ['  CONNECT evil.example:22 HTTP/1.1\r\n', 'a CONNECT to evil.example:22'],
    ['GET http://evil.example/ HTTP/1.1\r\n', 'a GET for http://evil.example/'],
    ['POST HTTPS://evil.example/x HTTP/1.1\r\n', 'a POST for HTTPS://evil.example/x'],
    ['GET ftp://evil.example/ HTTP/1.0\n', 'a GET for ftp://evil.example/'],
    ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'an HTTP/2 cleartext preface (PRI *)'],
    [
      'GET / HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\r\n',
      'an HTTP/2 cleartext upgrade (Upgrade: h2c)',
    ],
  ])('R7.17: finds %j and forwards none of it', (text, what) => {
    expect(run([text])).toEqual({ forwarded: '', relay: what });
  });

  it('R7.17: finds a relay request on any line, after an innocent request, with CRLF, LF or CR alone', () => {
    for (const separator of ['\r\n', '\n', '\r']) {
      const text = `GET / HTTP/1.1${separator}Host: a${separator}${separator}CONNECT 10.0.0.1:443 HTTP/1.1${separator}`;
      expect(run([text])).toEqual({ forwarded: '', relay: 'a CONNECT to 10.0.0.1:443' });
    }
    expect(run([INNOCENT, 'CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n'])).toEqual({
      forwarded: INNOCENT,
      relay: 'a CONNECT to 10.0.0.1:443',
    });
  });

  it('R7.17: however a relay request is split, not one byte of it is forwarded', () => {
    const request = 'CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n';
    for (let at = 0; at <= request.length; at++) {
      expect(run([request.slice(0, at), request.slice(at)]), `split at ${at}`).toEqual({
        forwarded: '',
        relay: 'a CONNECT to 10.0.0.1:443',
      });
    }
    const absolute = `${INNOCENT}GET http://evil.example/ HTTP/1.1\r\n\r\n`;
    for (let at = 0; at <= absolute.length; at++) {
      const result = run([absolute.slice(0, at), absolute.slice(at)]);
      expect(result.relay, `split at ${at}`).toBe('a GET for http://evil.example/');
      expect(INNOCENT.startsWith(result.forwarded), `split at ${at}`).toBe(true);
    }
    const byteByByte = run(request.split(''));
    expect(byteByByte).toEqual({ forwarded: '', relay: 'a CONNECT to 10.0.0.1:443' });
  });

  it('R7.17: innocent requests and text go on whole; only an undecided line start is held, and only until it is decided', () => {
    expect(run([INNOCENT])).toEqual({ forwarded: INNOCENT });
    const guard = new RelayGuard();
    expect(guard.feed(Buffer.from('GET / HTTP/1.1\r\nGE'))).toEqual({
      forward: Buffer.from('GET / HTTP/1.1\r\n'),
    });
    expect(guard.feed(Buffer.from('T /a'))).toEqual({ forward: Buffer.from('GET /a') });
    expect(run(['Visit the docs, then\r\nconnected: yes\r\nGET /x\r\n'])).toEqual({
      forwarded: 'Visit the docs, then\r\nconnected: yes\r\nGET /x\r\n',
    });
    expect(run(['Upgrade: websocket\r\n'])).toEqual({ forwarded: 'Upgrade: websocket\r\n' });
  });

  it('R7.17: binary data is not held, and memory stays bounded on a long line', () => {
    const forwarded = (verdict: GuardVerdict) =>
      'forward' in verdict ? verdict.forward : undefined;
    const guard = new RelayGuard();
    const startup = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);
    expect(forwarded(guard.feed(startup))?.equals(startup)).toBe(true);
    for (const fill of ['a', 'A', ' ', 'GET /']) {
      const line = new RelayGuard();
      const long = Buffer.alloc(1 << 20, fill);
      expect(forwarded(line.feed(long))?.length, fill).toBe(long.length);
      // Nothing of it is held: the next chunk comes back alone.
      expect(forwarded(line.feed(Buffer.from('x')))?.toString(), fill).toBe('x');
    }
    const header = new RelayGuard();
    expect(forwarded(header.feed(Buffer.from('Upgrade: ')))?.length).toBe(0);
    const over = forwarded(header.feed(Buffer.alloc(10_000, 'x')));
    expect(over).toBeUndefined();
  });

  it('R7.17: at the end of the stream a held line is judged as a whole line', () => {
    expect(run(['GET / HTTP/1.1\r\nCONNECT 10.0.0.1:443'])).toEqual({
      forwarded: 'GET / HTTP/1.1\r\n',
      relay: 'a CONNECT to 10.0.0.1:443',
    });
    expect(run(['GET / HTTP/1.1\r\nGE'])).toEqual({ forwarded: 'GET / HTTP/1.1\r\nGE' });
    expect(run(['GET / HTTP/1.1\r\nGE'], false)).toEqual({ forwarded: 'GET / HTTP/1.1\r\n' });
  });

  it('R7.17: a stream opening with a TLS record is not read', () => {
    const hello = Buffer.concat([
      Buffer.from([0x16, 0x03, 0x01, 0x00, 0x20]),
      Buffer.from('\r\nCONNECT 10.0.0.1:443 HTTP/1.1\r\n'),
    ]);
    expect(run([hello, '\nGET http://evil.example/ HTTP/1.1\r\n'])).toEqual({
      forwarded: `${hello.toString('latin1')}\nGET http://evil.example/ HTTP/1.1\r\n`,
    });
    // Only the stream's first byte counts: a TLS byte later is data like any other.
    expect(run(['x', Buffer.from([0x16]), '\nCONNECT a:1 HTTP/1.1\r\n']).relay).toBe(
      'a CONNECT to a:1',
    );
  });
});
