// Runs once per package before its tests: every test process gets a fresh temp directory (TMPDIR)
// and a fresh root for Ahma's private state (XDG_STATE_HOME), removed afterwards.
// Why: the temp directory is writable by sandboxed commands, and a server refuses to start when its
// own code lies in a writable path (R7.6). CI may clone this repository under /tmp; with the usual
// TMPDIR every server a test starts would then be refused. A directory created now cannot contain
// the checkout. The state root sits beside it, outside every writable path, as the engine requires,
// and keeps the tests away from the developer's own ~/.local/state.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  // Each vitest project runs this setup; the first one's directories serve them all (a nested
  // TMPDIR would make paths too long for unix sockets, 107 bytes).
  if (process.env['AHMA_TEST_BASE'] !== undefined) return () => undefined;
  const original = tmpdir();
  const base = realpathSync(mkdtempSync(join(original, 'ahma-test-')));
  const temp = join(base, 'tmp');
  const state = join(base, 'state');
  mkdirSync(temp);
  mkdirSync(state);
  // The Inspector and conformance checks download Node 22 into ${TMPDIR}/…: keep their caches
  // where they were.
  process.env['INSPECTOR_CHECK_CACHE'] ??= join(original, 'ahma-inspector-cache');
  process.env['CONFORMANCE_CHECK_CACHE'] ??= join(original, 'ahma-conformance-cache');
  process.env['AHMA_TEST_BASE'] = base;
  process.env['TMPDIR'] = temp;
  process.env['XDG_STATE_HOME'] = state;
  return () => {
    delete process.env['AHMA_TEST_BASE'];
    try {
      // Retried: a server a test closed may still be exiting and writing its temp files.
      rmSync(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch {
      // A read-only tree a tool left (Go's module cache) must not fail the run.
    }
  };
}
