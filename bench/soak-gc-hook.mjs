// TEST-ONLY memory probe for bench/session-soak.mjs; never loaded by ahma-shell on its own.
//
// The soak starts the server as
//   node --expose-gc --import ./bench/soak-gc-hook.mjs packages/shell-server/bin/ahma-shell.js …
// (a preload: no line of the server's code knows about it). On SIGUSR2 it forces two full garbage
// collections and writes one line on stderr:
//   ahma-soak-memory: {"seq":N,"rss":…,"heapUsed":…,"heapTotal":…,"external":…,"arrayBuffers":…,
//                      "spaces":{"new_space":…,"old_space":…,…}}
// (bytes: process.memoryUsage() after the collections, and the memory V8 holds for each heap space;
// `seq` counts the probes). With
// AHMA_SOAK_HEAPSNAPSHOT_DIR set it also writes a heap snapshot there after each probe (slow and
// large: for finding what retains memory, not for the numbers). No inspector is involved.
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

if (typeof globalThis.gc !== 'function') {
  writeSync(2, 'ahma-soak-memory: the hook needs node --expose-gc\n');
} else {
  let seq = 0;
  process.on('SIGUSR2', () => {
    globalThis.gc();
    globalThis.gc();
    const usage = process.memoryUsage();
    // What V8 has committed per space: the young generation grown under load is given back only
    // once V8 sees the allocation rate fall (its memory reducer, seconds later), not by gc().
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]),
    );
    const line = { seq: ++seq, ...usage, spaces };
    const dir = process.env['AHMA_SOAK_HEAPSNAPSHOT_DIR'];
    if (dir)
      writeHeapSnapshot(join(dir, `soak-${String(process.pid)}-${String(seq)}.heapsnapshot`));
    writeSync(2, `ahma-soak-memory: ${JSON.stringify(line)}\n`);
  });
}
