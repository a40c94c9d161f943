// The units of the pool zygote (SPEC §5, R4.1): every command in a unit of its own, taken from the
// warm units kept ready for each mode (a sandboxed shell for a script, a waiting fork of the helper
// for an argv command) or forked on the spot beyond them; the pool refilled after each command; a
// unit that dies while idle replaced, with no retry loop after three deaths in a row.
import { describe, expect, it } from 'vitest';
import {
  childrenOf,
  commOf,
  isGone,
  processState,
  sleep,
  waitFor,
} from '../support/sandbox-helper.js';
import {
  type RunResult,
  pool,
  supervisorsOf,
  isTemplateCopy,
  warmShellUnits,
  warmArgvUnits,
  warmShells,
  poolReady,
  useZygoteTests,
} from '../support/zygote.js';

describe.runIf(process.platform === 'linux')('ahma-sandbox --pool (zygote)', () => {
  useZygoteTests();

  describe('the pool', () => {
    it('R4.1: 20 sequential commands all answer, each in a fresh unit, and the pool is refilled', async () => {
      const zygote = pool(2);
      const pids: number[] = [];
      for (let i = 0; i < 20; i++) {
        const result = await zygote.run('shell', [`echo ${i}`]);
        expect(result).toMatchObject({ output: `${i}\n`, code: 0 });
        pids.push(result.pid);
      }
      expect(new Set(pids).size).toBe(20);
      // Idle again: exactly the pool's units (their supervisors) are the zygote's children.
      await poolReady(zygote, 2);
      for (const pid of pids) expect(isGone(pid), `supervisor ${pid}`).toBe(true);
    });

    it('R4.1: a burst of 10 concurrent commands with --pool 2 all complete (cold units beyond the pool)', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const started = Date.now();
      const ids = Array.from({ length: 10 }, (_, i) =>
        zygote.start('shell', [`sleep 0.4; echo ${i}`]),
      );
      const results = await Promise.all(ids.map((id) => zygote.result(id)));
      const elapsed = Date.now() - started;
      results.forEach((result, i) => expect(result).toMatchObject({ output: `${i}\n`, code: 0 }));
      expect(new Set(results.map((r) => r.pid)).size).toBe(10);
      expect(elapsed).toBeLessThan(3_000); // they ran side by side, not one after another
    });

    it('R4.1: a unit that dies while idle is replaced, its shell swept; after 3 deaths in a row only the next request retries', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const [victim] = warmShellUnits(zygote.pid);
      if (victim === undefined) throw new Error('no warm unit');
      const shell = childrenOf(victim);
      expect(shell).toHaveLength(1);
      process.kill(victim, 'SIGKILL');
      await waitFor(
        () => !childrenOf(zygote.pid).includes(victim) && warmShellUnits(zygote.pid).length === 2,
        'a replacement unit',
      );
      for (const pid of [victim, ...shell]) await waitFor(() => isGone(pid), `pid ${pid} gone`);
      expect(await zygote.run('argv', ['echo', 'ok'])).toMatchObject({ output: 'ok\n', code: 0 });

      // A "shell" that exits at once: every warm unit dies while idle.
      const failing = pool(1, ['--shell', '/bin/false']);
      const deaths = () => failing.stderr.match(/died while idle/g)?.length ?? 0;
      await failing.until(() => (deaths() >= 3 ? true : undefined), 'three idle deaths');
      await sleep(300);
      expect(deaths()).toBe(3);
      // An argv command needs no warm shell: a warm argv unit runs it, and no shell is retried.
      expect(await failing.run('argv', ['true'])).toMatchObject({ code: 0, signal: 0 });
      await sleep(300);
      expect(deaths()).toBe(3);
      // A shell script runs in a cold unit (whose "shell" exits 1), and the pool is tried again.
      expect(await failing.run('shell', ['true'])).toMatchObject({ code: 1, signal: 0 });
      await failing.until(() => (deaths() >= 6 ? true : undefined), 'three more idle deaths');
      await sleep(300);
      expect(deaths()).toBe(6);
      expect(failing.alive).toBe(true);
    });

    it('R4.1: warm argv units are ready before any request: N supervisors with a waiting child each, besides the N warm shells', async () => {
      const zygote = pool(3);
      await poolReady(zygote, 3, 'three warm shells and three warm argv units');
      // Nothing but the units below the zygote, each a supervisor (session leader) with one child,
      // and the template shell. A shell unit's supervisor is a copy of the template, an argv
      // unit's a fork of the helper.
      const supervisors = supervisorsOf(zygote.pid);
      expect(supervisors).toHaveLength(6);
      expect(childrenOf(zygote.pid)).toHaveLength(7);
      for (const supervisor of supervisors) expect(childrenOf(supervisor)).toHaveLength(1);
      expect(warmShellUnits(zygote.pid).every(isTemplateCopy)).toBe(true);
      for (const supervisor of warmArgvUnits(zygote.pid))
        expect(commOf(supervisor)).toBe('ahma-sandbox');
      // An argv unit's B blocks in read(2) until the zygote hands it a request.
      for (const supervisor of warmArgvUnits(zygote.pid)) {
        const [waiting] = childrenOf(supervisor);
        expect(waiting === undefined ? undefined : processState(waiting)).toBe('S');
      }
      expect(zygote.frames).toEqual([]);
    });

    it('R4.1: an argv request is served by a warm argv unit alive before it, which is then replaced', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const shells = warmShells(zygote.pid);
      const served: number[] = [];
      for (let i = 0; i < 5; i++) {
        const warm = warmArgvUnits(zygote.pid);
        expect(warm).toHaveLength(2);
        const result = await zygote.run('argv', ['echo', `${i}`]);
        expect(result).toMatchObject({ output: `${i}\n`, code: 0, signal: 0 });
        expect(warm).toContain(result.pid); // the oldest warm unit, not one forked for it
        served.push(result.pid);
        await waitFor(() => isGone(result.pid), `supervisor ${result.pid} gone`);
        await waitFor(
          () => warmArgvUnits(zygote.pid).filter((pid) => !warm.includes(pid)).length === 1,
          'a replacement argv unit',
        );
        await poolReady(zygote, 2);
      }
      expect(new Set(served).size).toBe(5);
      // The warm shells were neither consumed nor replaced by the argv commands.
      expect(warmShells(zygote.pid)).toEqual(shells);
    });

    it('R4.1: argv commands get a unit each (distinct supervisors), warm or forked on the spot beyond the pool', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const warm = warmArgvUnits(zygote.pid);
      const shellUnits = warmShellUnits(zygote.pid);
      const shells = warmShells(zygote.pid);

      const sequential: RunResult[] = [];
      for (let i = 0; i < 10; i++) sequential.push(await zygote.run('argv', ['echo', `${i}`]));
      const burst = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          zygote.run('argv', ['sh', '-c', `sleep 0.2; echo ${i}`]),
        ),
      );
      [...sequential, ...burst].forEach((result, i) =>
        expect(result).toMatchObject({ output: `${i % 10}\n`, code: 0, signal: 0 }),
      );
      const supervisors = [...sequential, ...burst].map((result) => result.pid);
      expect(new Set(supervisors).size).toBe(20);
      expect(supervisors.slice(0, 2)).toEqual(warm);
      for (const pid of supervisors) {
        expect(shellUnits).not.toContain(pid);
        await waitFor(() => isGone(pid), `supervisor ${pid} gone`);
      }
      // The same warm shells, still waiting: no argv command consumed or replaced one.
      await poolReady(zygote, 2);
      expect(warmShellUnits(zygote.pid)).toEqual(shellUnits);
      expect(warmShells(zygote.pid)).toEqual(shells);

      // A shell script still takes a warm shell unit (the oldest), and the pool is refilled.
      const script = await zygote.run('shell', ['echo from a warm shell']);
      expect(script).toMatchObject({ output: 'from a warm shell\n', code: 0 });
      expect(script.pid).toBe(shellUnits[0]);
      await poolReady(zygote, 2, 'the pool refilled');
    });

    it('R4.1: an idle argv unit killed from outside is replaced, its waiting child swept; after 3 deaths in a row only the next argv request retries', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      // SIGKILL to the supervisor: B re-parents to the zygote, which sweeps it.
      const [victim] = warmArgvUnits(zygote.pid);
      if (victim === undefined) throw new Error('no warm argv unit');
      const [waiting] = childrenOf(victim);
      if (waiting === undefined) throw new Error('no waiting child');
      process.kill(victim, 'SIGKILL');
      await waitFor(
        () => !childrenOf(zygote.pid).includes(victim) && warmArgvUnits(zygote.pid).length === 2,
        'a replacement argv unit',
      );
      for (const pid of [victim, waiting]) await waitFor(() => isGone(pid), `pid ${pid} gone`);
      // SIGTERM to the waiting child: its supervisor ends with it, and is replaced as well.
      const [second] = warmArgvUnits(zygote.pid);
      const [secondChild] = second === undefined ? [] : childrenOf(second);
      if (second === undefined || secondChild === undefined) throw new Error('no warm argv unit');
      process.kill(secondChild, 'SIGTERM');
      await waitFor(
        () => !childrenOf(zygote.pid).includes(second) && warmArgvUnits(zygote.pid).length === 2,
        'another replacement argv unit',
      );
      await waitFor(() => isGone(second) && isGone(secondChild), 'the second unit gone');
      for (const signal of [9, 15]) {
        const death = new RegExp(
          `a warm argv unit \\(pid \\d+\\) died while idle: signal ${signal}\n`,
        );
        await zygote.until(() => (death.test(zygote.stderr) ? true : undefined), `death ${signal}`);
      }
      expect(await zygote.run('argv', ['echo', 'ok'])).toMatchObject({ output: 'ok\n', code: 0 });

      // The same anti-spin rule as for warm shells: after 3 idle deaths in a row, no more.
      const small = pool(1);
      await poolReady(small, 1);
      const deaths = () => small.stderr.match(/warm argv unit .* died while idle/g)?.length ?? 0;
      for (let i = 1; i <= 3; i++) {
        const [unit] = warmArgvUnits(small.pid);
        if (unit === undefined) throw new Error('no warm argv unit');
        process.kill(unit, 'SIGKILL');
        await small.until(() => (deaths() >= i ? true : undefined), `idle death ${i}`);
        if (i < 3) await poolReady(small, 1, `replacement ${i}`);
      }
      await sleep(300);
      expect(deaths()).toBe(3);
      expect(warmArgvUnits(small.pid)).toEqual([]);
      expect(warmShellUnits(small.pid)).toHaveLength(1);
      // An argv request runs in a unit forked on the spot, and the argv units are kept again.
      expect(await small.run('argv', ['echo', 'cold'])).toMatchObject({
        output: 'cold\n',
        code: 0,
      });
      await poolReady(small, 1, 'the argv unit back');
      expect(small.alive).toBe(true);
    });
  });
});
