// Supervision by the pool zygote (SPEC §3: no orphan or zombie survives a command, a kill or the
// zygote): a K frame ends the command's whole tree, setsid grandchildren included, even when its
// supervisor is SIGKILLed; stdin EOF, SIGTERM and the death of the zygote's parent end every unit.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  childrenOf,
  descendantsOf,
  helper,
  isGone,
  pidsWithMarker,
  processState,
  processTable,
  quote,
  waitFor,
} from '../support/sandbox-helper.js';
import {
  pool,
  newMarker,
  supervisorsOf,
  warmShellUnits,
  warmArgvUnits,
  scope,
  useZygoteTests,
} from '../support/zygote.js';

describe.runIf(process.platform === 'linux')('ahma-sandbox --pool (zygote)', () => {
  useZygoteTests();

  describe('kill and shutdown (SPEC §3: no orphan survives)', () => {
    const treeScript = (marker: string) =>
      `setsid -f bash -c ${quote(`exec -a ${marker}-daemon sleep 100`)}
       (exec -a ${marker}-job sleep 100) &
       exec -a ${marker}-main sleep 100`;

    it('R4.1: K with SIGTERM ends the command and its setsid grandchild; X reports SIGTERM; no zombie', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      const id = zygote.start('shell', [treeScript(marker)]);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      const pids = pidsWithMarker(marker);
      zygote.kill(id, 15);
      const result = await zygote.result(id);
      expect(result).toMatchObject({ code: -1, signal: 15 });
      expect(pidsWithMarker(marker)).toEqual([]);
      for (const pid of [...pids, result.pid]) expect(isGone(pid), `pid ${pid}`).toBe(true);
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: K with SIGTERM on an argv `sleep 100` with a setsid grandchild leaves nothing behind', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      // argv mode: bash is just the program here; it starts the daemon, then becomes `sleep 100`.
      const id = zygote.start('argv', ['bash', '-c', treeScript(marker)]);
      const started = await zygote.frame('S', id);
      const supervisor = started.payload.readUInt32LE(0);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      const pids = pidsWithMarker(marker);
      // No shell in between: the command (bash, exec'd into `sleep`) is its supervisor's child.
      const [main] = pidsWithMarker(`${marker}-main`);
      expect(main === undefined ? undefined : processTable().get(main)).toBe(supervisor);
      zygote.kill(id, 15);
      const result = await zygote.result(id);
      expect(result).toMatchObject({ pid: supervisor, code: -1, signal: 15 });
      expect(pidsWithMarker(marker)).toEqual([]);
      for (const pid of [...pids, supervisor]) expect(isGone(pid), `pid ${pid}`).toBe(true);
      expect(await zygote.run('argv', ['echo', 'next'])).toMatchObject({ output: 'next\n' });
    });

    it('R4.1: K with SIGKILL on the supervisor still leaves nothing behind (the zygote sweeps orphans)', async () => {
      const zygote = pool(1);
      const marker = newMarker();
      const id = zygote.start('shell', [treeScript(marker)]);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      const pids = pidsWithMarker(marker);
      zygote.kill(id, 9);
      const result = await zygote.result(id);
      expect(result).toMatchObject({ code: -1, signal: 9 });
      await waitFor(() => pids.every(isGone), 'the orphaned tree to be gone');
      expect(pidsWithMarker(marker)).toEqual([]);
      expect(await zygote.run('argv', ['echo', 'next'])).toMatchObject({ output: 'next\n' });
    });

    it('R4.1: stdin EOF shuts the zygote down: busy and warm units end, no process of its tree survives', async () => {
      const zygote = pool(3);
      const marker = newMarker();
      const id = zygote.start('shell', [treeScript(marker)]);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      await waitFor(
        () =>
          supervisorsOf(zygote.pid).length === 7 &&
          warmShellUnits(zygote.pid).length === 3 &&
          warmArgvUnits(zygote.pid).length === 3,
        'three warm shells, three warm argv units and a busy unit',
      );
      const tree = descendantsOf(zygote.pid);
      // 6 idle units (supervisor + shell or waiting child) + the busy unit's supervisor, shell and
      // job (the setsid daemon re-parented to the busy supervisor, still below the zygote).
      expect(tree.length).toBeGreaterThanOrEqual(6 * 2 + 4);
      for (const pid of pidsWithMarker(marker)) expect(tree).toContain(pid);

      expect(await zygote.close()).toEqual({ code: 0, signal: null });
      expect(await zygote.result(id)).toMatchObject({ code: -1, signal: 15 });
      for (const pid of tree) expect(isGone(pid), `pid ${pid}`).toBe(true);
      expect(pidsWithMarker(marker)).toEqual([]);
    });

    it('R4.1: SIGTERM to the zygote shuts it down the same way, exit 0', async () => {
      const zygote = pool(2);
      const marker = newMarker();
      zygote.start('shell', [`exec -a ${marker} sleep 100`]);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the marked process');
      await waitFor(
        () => supervisorsOf(zygote.pid).length === 5 && warmArgvUnits(zygote.pid).length === 2,
        'four warm units and a busy one',
      );
      const tree = descendantsOf(zygote.pid);
      zygote.child.kill('SIGTERM');
      expect(await zygote.exited).toEqual({ code: 0, signal: null });
      for (const pid of tree) expect(isGone(pid), `pid ${pid}`).toBe(true);
    });

    it("R4.1: when the zygote's parent dies (PDEATHSIG), the zygote ends every unit and exits", async () => {
      // bash holds the zygote, whose stdin stays open (our pipe), so only PDEATHSIG can end it.
      const parent = spawn(
        'bash',
        [
          '-c',
          `exec 3<&0; ${quote(helper)} --read-all --rw ${quote(scope)} --pool 2 -- <&3 3<&- & wait`,
        ],
        { stdio: ['pipe', 'ignore', 'ignore'] },
      );
      try {
        const parentPid = parent.pid ?? 0;
        // The zygote, two warm shell units and two warm argv units (supervisor and child each),
        // and the template shell.
        await waitFor(() => descendantsOf(parentPid).length === 10, 'zygote and four warm units');
        const [zygotePid] = childrenOf(parentPid);
        const units = descendantsOf(parentPid).filter((pid) => pid !== zygotePid);
        expect(units).toHaveLength(9);
        parent.kill('SIGKILL');
        await waitFor(() => units.every(isGone), 'every unit to be gone');
        // The zygote itself exits; reaping it is up to whoever inherited it (pid 1 here).
        await waitFor(
          () => zygotePid === undefined || isGone(zygotePid) || processState(zygotePid) === 'Z',
          'the zygote to exit',
        );
      } finally {
        parent.kill('SIGKILL');
        parent.stdin?.destroy();
      }
    });
  });
});
