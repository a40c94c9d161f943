// The template shell of the pool zygote (R4.1): shell units are copies of one template bash, each
// with its own $$, $PPID, $#, SECONDS and RANDOM and the signal handling of a fresh bash; without
// ahma-unit.so, or once the template died or stopped, every shell unit starts a bash of its own;
// the template and its copies are sandboxed like every unit (R7.2).
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  commOf,
  helper,
  isGone,
  pidsWithMarker,
  quote,
  sleep,
  waitFor,
} from '../support/sandbox-helper.js';
import {
  Zygote,
  pool,
  newMarker,
  templatesOf,
  isTemplateCopy,
  warmShellUnits,
  poolReady,
  scope,
  outside,
  useZygoteTests,
} from '../support/zygote.js';

describe.runIf(process.platform === 'linux')('ahma-sandbox --pool (zygote)', () => {
  useZygoteTests();

  describe('the template shell', () => {
    // What a shell command sees of its own shell, one line: $$ $BASHPID $PPID $# $SECONDS $RANDOM,
    // the parent of $PPID (the supervisor's parent), and whether this bash is a template copy.
    const introspect =
      'echo "$$ $BASHPID $PPID $# $SECONDS $RANDOM $(cut -d" " -f4 /proc/$PPID/stat)"; ' +
      'if grep -q ahma_unit /proc/$$/cmdline; then echo 1; else echo 0; fi';

    const parse = (output: string) => {
      const [line = '', copies = ''] = output.split('\n');
      const [pid, bashPid, ppid, argc, seconds, random, grandparent] = line.split(' ').map(Number);
      return { pid, bashPid, ppid, argc, seconds, random, grandparent, copy: copies === '1' };
    };

    it('R4.1: shell units are copies of one template bash (no bash start-up per command), with $$, $PPID, $#, SECONDS and RANDOM their own', async () => {
      const zygote = pool(2);
      await poolReady(zygote, 2);
      const [template] = templatesOf(zygote.pid);
      expect(template === undefined ? false : isTemplateCopy(template)).toBe(true);
      await sleep(2_500); // the template's own SECONDS is now ≥ 2: a copy must not count from it
      // Three warm units and a few forked on the spot beyond the pool.
      const results = await Promise.all(
        Array.from({ length: 5 }, () => zygote.run('shell', [`sleep 1.1; ${introspect}`])),
      );
      const seen = results.map((result) => ({ ...parse(result.output), supervisor: result.pid }));
      for (const each of seen) {
        expect(each).toMatchObject({
          copy: true,
          bashPid: each.pid, // $$ is the unit's own bash, not the template
          ppid: each.supervisor, // $PPID is its supervisor S...
          grandparent: zygote.pid, // ...which is the zygote's child (cloned with CLONE_PARENT)
          argc: 0, // the template's own arguments (the builtin's path) are gone
        });
        // Counted from the command's start (1.1 s ago, whole seconds), not from the template's.
        expect(each.seconds).toBeGreaterThanOrEqual(1);
        expect(each.seconds).toBeLessThanOrEqual(2);
      }
      expect(new Set(seen.map((each) => each.pid)).size).toBe(5);
      expect(new Set(seen.map((each) => each.random)).size).toBeGreaterThan(1);
      expect(templatesOf(zygote.pid)).toEqual([template]); // one template serves them all
    });

    it("R4.1: a template copy's bash handles signals like a fresh bash: same blocked and ignored sets, traps work", async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      // Read by bash itself (no child: a fork would catch bash with signals blocked around it).
      const signals =
        'while IFS= read -r l; do case $l in SigBlk:*|SigIgn:*) echo "$l";; esac; done </proc/$$/status';
      const result = await zygote.run('shell', [
        `${introspect}; ${signals}; echo fresh; bash --noprofile --norc -c ${quote(`${signals}; true`)}; ` +
          "trap 'echo trapped; exit 3' TERM; kill -TERM $$; echo not reached",
      ]);
      expect(parse(result.output).copy).toBe(true);
      const [, copy = '', fresh = ''] =
        /\n(Sig[^]*?)fresh\n(Sig[^]*?)trapped\n/.exec(result.output) ?? [];
      expect(copy).toMatch(/^SigBlk:.*\nSigIgn:.*\n$/);
      expect(copy).toBe(fresh);
      expect(result.output).not.toContain('not reached');
      expect(result).toMatchObject({ code: 3, signal: 0 });
    });

    it('R4.1: without ahma-unit.so beside the helper, every shell unit starts a bash of its own, with the same behaviour', async () => {
      const dir = await mkdtemp('/var/tmp/ahma-zyg-bin-');
      try {
        const lone = join(dir, 'ahma-sandbox');
        await copyFile(helper, lone);
        await chmod(lone, 0o755);
        const zygote = new Zygote(['--read-all', '--rw', scope, '--pool', '2', '--'], lone);
        await waitFor(() => warmShellUnits(zygote.pid).length === 2, 'two warm shells');
        expect(templatesOf(zygote.pid)).toEqual([]);
        const result = await zygote.run('shell', [introspect]);
        expect({ ...parse(result.output), supervisor: result.pid }).toMatchObject({
          copy: false,
          bashPid: parse(result.output).pid,
          ppid: result.pid,
          grandparent: zygote.pid,
          argc: 0,
        });
        expect(parse(result.output).seconds).toBeLessThanOrEqual(1);
        // A script's errors and LINENO name its own lines either way, as `bash -c SCRIPT` does;
        // the unit's set-up function is gone before the script runs.
        const failing = 'echo "$LINENO $(declare -F | wc -l)"\n(( 1 / 0 ))';
        const classic = await zygote.run('shell', [failing]);
        const copied = await pool(1).run('shell', [failing]);
        expect(classic.output).toMatch(/^1 0\n.*line 2: .*division by 0/);
        expect(copied.output).toBe(classic.output);
        expect(zygote.stderr).toBe('');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('R4.1: when the template shell dies, the zygote says so and starts a bash per shell unit from then on', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const [template] = templatesOf(zygote.pid);
      if (template === undefined) throw new Error('no template shell');
      process.kill(template, 'SIGKILL');
      await zygote.until(
        () => (/template shell/.test(zygote.stderr) ? true : undefined),
        'the message about the template',
      );
      await waitFor(() => isGone(template), 'the template reaped');
      // The warm copy made before its death still serves; the units after it are classic.
      const results = await Promise.all(
        Array.from({ length: 4 }, () => zygote.run('shell', [introspect])),
      );
      for (const result of results) expect(result).toMatchObject({ code: 0, signal: 0 });
      expect(results.filter((result) => !parse(result.output).copy).length).toBeGreaterThanOrEqual(
        3,
      );
      await waitFor(() => warmShellUnits(zygote.pid).length === 1, 'a classic warm shell');
      expect(warmShellUnits(zygote.pid).some(isTemplateCopy)).toBe(false);
      expect(templatesOf(zygote.pid)).toEqual([]);
      expect(zygote.alive).toBe(true);
    });

    it('R4.1: a stopped template costs one short wait, then shell units start a bash each; nothing strays', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const [template] = templatesOf(zygote.pid);
      if (template === undefined) throw new Error('no template shell');
      process.kill(template, 'SIGSTOP');
      const started = Date.now();
      const results = await Promise.all(
        Array.from({ length: 3 }, (_, i) => zygote.run('shell', [`echo ${String(i)}`])),
      );
      results.forEach((result, i) =>
        expect(result).toMatchObject({ output: `${String(i)}\n`, code: 0 }),
      );
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(zygote.stderr).toContain('did not answer');
      await waitFor(() => isGone(template), 'the stopped template killed and reaped');
      // Every unit the zygote knows answers K; no unit it does not know is left.
      const marker = newMarker();
      const id = zygote.start('shell', [`exec -a ${marker} sleep 30`]);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the marked sleep');
      zygote.kill(id, 15);
      expect(await zygote.result(id)).toMatchObject({ code: -1, signal: 15 });
      expect(pidsWithMarker(marker)).toEqual([]);
    });

    it("R4.1: a copy's supervisor dies from a K frame's signal like any supervisor; `ahma_unit` is the template's alone", async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const id = zygote.start('shell', ['sleep 5; echo late']);
      const supervisor = (await zygote.frame('S', id)).payload.readUInt32LE(0);
      expect(isTemplateCopy(supervisor)).toBe(true);
      expect(commOf(supervisor)).toBe('ahma-sandbox');
      zygote.kill(id, 10); // SIGUSR1
      expect(await zygote.result(id)).toMatchObject({ code: -1, signal: 10, output: '' });
      // Even a signal the template's bash ignores (SIGQUIT).
      const quit = zygote.start('shell', ['sleep 5; echo late']);
      await zygote.frame('S', quit);
      zygote.kill(quit, 3);
      expect(await zygote.result(quit)).toMatchObject({ code: -1, signal: 3, output: '' });

      const again = await zygote.run('shell', ['ahma_unit 3 0 -1; echo "status $?"']);
      expect(again.output).toContain('only the template shell serves the pool');
      expect(again.output).toMatch(/status [1-9]\d*\n$/);
    });

    it('R7.2: the template shell and its copies are sandboxed like every unit', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const target = join(outside, 'escaped');
      const result = await zygote.run('shell', [`${introspect}; echo x > ${quote(target)}`]);
      expect(parse(result.output).copy).toBe(true);
      expect(result.output).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
      const [template] = templatesOf(zygote.pid);
      const status = await readFile(`/proc/${String(template)}/status`, 'utf8');
      expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(status).toMatch(/^Seccomp:\s+2$/m);
    });
  });
});
