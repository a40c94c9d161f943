// The sandbox every unit of the pool zygote inherits, warm or forked on the spot (R7.2): a write
// outside --rw fails, AF_UNIX is refused; each command has a Landlock domain of its own (R7.6);
// with --scope, a working directory outside the scope is refused (R7.1).
//
// Scopes live under /var/tmp, not /tmp: the server grants /tmp by design, so a write that lands in
// /tmp would prove nothing about the scope.
import { existsSync } from 'node:fs';
import { readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  childrenOf,
  descendantsOf,
  pidsWithMarker,
  processState,
  quote,
  waitFor,
} from '../support/sandbox-helper.js';
import {
  Zygote,
  pool,
  newMarker,
  warmArgvUnits,
  poolReady,
  scope,
  outside,
  useZygoteTests,
} from '../support/zygote.js';

describe.runIf(process.platform === 'linux')('ahma-sandbox --pool (zygote)', () => {
  useZygoteTests();

  describe('sandbox', () => {
    it('R7.2: every unit inherits the sandbox: a write outside --rw fails, inside works, AF_UNIX is refused', async () => {
      const zygote = pool(2);
      const target = join(outside, 'escaped');
      const result = await zygote.run('shell', [
        `echo x > ${quote(target)}; echo inside > ${quote(join(scope, 'inside'))}`,
      ]);
      expect(result.output).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
      expect(await readFile(join(scope, 'inside'), 'utf8')).toBe('inside\n');
      // The same in a cold unit forked on the spot, and in a grandchild of a warm one.
      const burst = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          zygote.run('shell', [`(echo x > ${quote(`${target}-${i}`)}) 2>&1 | cat`]),
        ),
      );
      for (const each of burst) expect(each.output).toContain('Permission denied');
      const socket = await zygote.run('argv', [
        'python3',
        '-c',
        'import socket\ntry:\n  socket.socket(socket.AF_UNIX)\n  print("allowed")\nexcept OSError as e:\n  print(e.errno)',
      ]);
      expect(socket.output).toBe('13\n'); // EACCES from the seccomp filter
    });

    it('R7.6: each command has a Landlock domain of its own: it cannot signal or ptrace the zygote, its supervisor or another command', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const marker = newMarker();
      const victimId = zygote.start('shell', [`exec -a ${marker} sleep 30`]);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the victim command');
      const [victim] = pidsWithMarker(marker);
      if (victim === undefined) throw new Error('no victim');
      const [victimSupervisor] = descendantsOf(zygote.pid).filter((pid) =>
        childrenOf(pid).includes(victim),
      );
      const targets = [zygote.pid, victimSupervisor ?? 0, victim];
      const attacker = await zygote.run('shell', [
        `for pid in $PPID ${targets.join(' ')}; do kill -STOP $pid 2>/dev/null; echo "kill:$?"; done; ` +
          `python3 -c 'import ctypes; libc=ctypes.CDLL(None,use_errno=True); ` +
          `print("ptrace", libc.ptrace(16, ${String(victim)}, 0, 0), ctypes.get_errno())'`,
      ]);
      expect(attacker.output).toBe('kill:1\nkill:1\nkill:1\nkill:1\nptrace -1 1\n');
      for (const pid of targets) expect(processState(pid)).not.toBe('T');
      // The victim still ends normally when its own command is stopped through the zygote.
      zygote.kill(victimId, 15);
      expect(await zygote.result(victimId)).toMatchObject({ signal: 15 });
    });

    it('R7.1: with --scope, a working directory that is not inside the scope (a directory swapped for a link) is refused, in both kinds of unit', async () => {
      const zygote = new Zygote([
        '--read-all',
        '--rw',
        scope,
        '--scope',
        scope,
        '--pool',
        '1',
        '--',
      ]);
      const link = join(scope, 'swapped');
      await symlink(outside, link);
      for (const [mode, words] of [
        ['argv', ['touch', 'ran-argv']],
        ['shell', ['touch ran-shell']],
      ] as const) {
        const refused = await zygote.run(mode, words, link);
        expect(refused.code).toBe(125);
        expect(refused.output).toContain(`is not inside the scope ${scope}`);
        const inside = await zygote.run(mode, mode === 'argv' ? ['pwd'] : ['pwd; echo "$#"']);
        expect(inside.output).toBe(mode === 'argv' ? `${scope}\n` : `${scope}\n0\n`);
      }
      expect(existsSync(join(outside, 'ran-argv'))).toBe(false);
      expect(existsSync(join(outside, 'ran-shell'))).toBe(false);
    });

    it('R7.2: argv units, warm or forked on the spot, are sandboxed too: a write outside --rw fails, inside works', async () => {
      const zygote = pool(1);
      await poolReady(zygote, 1);
      const warm = warmArgvUnits(zygote.pid);
      const target = join(outside, 'escaped');
      const denied = await zygote.run('argv', ['touch', target]);
      expect(denied.code).toBe(1);
      expect(denied.output).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
      expect(warm).toEqual([denied.pid]);
      // A burst beyond the pool: the units forked on the spot are confined the same way.
      const burst = await Promise.all(
        [0, 1, 2].map((i) =>
          zygote.run('argv', ['sh', '-c', `sleep 0.1; touch ${quote(`${target}-${i}`)}`]),
        ),
      );
      for (const each of burst) {
        expect(each.code).toBe(1);
        expect(each.output).toContain('Permission denied');
      }
      for (const i of [0, 1, 2]) expect(existsSync(`${target}-${i}`)).toBe(false);
      const python = await zygote.run('argv', [
        'python3',
        '-c',
        `import sys\ntry:\n  open(sys.argv[1], "w")\nexcept OSError as e:\n  print(e.errno)`,
        join(outside, 'escaped-too'),
      ]);
      expect(python.output).toBe('13\n');
      const inside = join(scope, 'inside');
      expect(await zygote.run('argv', ['touch', inside])).toMatchObject({ output: '', code: 0 });
      expect(existsSync(inside)).toBe(true);
    });
  });
});
