// Workspace lanes (SPEC §14 lanes): the exclusive calls of one workspace take turns, first come
// first served; a call cancelled while it waits leaves the line; the line can be read; the
// workspace is the git top level of the working directory, else the scope.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceLanes } from '../../src/lanes/workspace-lanes.js';

let scope = '';
beforeAll(async () => {
  scope = await mkdtemp(join(tmpdir(), 'ahma-lanes-'));
});
afterAll(() => rm(scope, { recursive: true, force: true }));

const never = () => new AbortController().signal;

/** Whether `promise` has settled by the time the microtasks before it have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe.concurrent('WorkspaceLanes', () => {
  it('SPEC §14 lanes: the first call holds the workspace; the next ones wait in order, each behind the one before', async () => {
    const lanes = new WorkspaceLanes(scope);
    const first = lanes.enter('/w', 'op1', 'a', never());
    const second = lanes.enter('/w', 'op2', 'b', never());
    const third = lanes.enter('/w', 'op3', 'c', never());
    expect(first.place).toBeUndefined();
    expect(second.place).toEqual({ workspace: '/w', behind: 'op1', position: 1 });
    expect(third.place).toEqual({ workspace: '/w', behind: 'op2', position: 2 });
    expect(await settled(first.turn)).toBe(true);
    expect(await settled(second.turn)).toBe(false);
    expect(lanes.queues()).toEqual([{ workspace: '/w', holder: 'op1', waiting: ['op2', 'op3'] }]);

    first.release();
    expect(await settled(second.turn)).toBe(true);
    expect(await settled(third.turn)).toBe(false);
    expect(lanes.placeOf('op3')).toEqual({ workspace: '/w', behind: 'op2', position: 1 });
    first.release(); // a second release hands nothing on
    expect(await settled(third.turn)).toBe(false);
    second.release();
    expect(await settled(third.turn)).toBe(true);
    third.release();
    expect(lanes.queues()).toEqual([]);
  });

  it('SPEC §14 lanes: two workspaces do not wait for each other', async () => {
    const lanes = new WorkspaceLanes(scope);
    lanes.enter('/a', 'op1', 'x', never());
    const other = lanes.enter('/b', 'op2', 'x', never());
    expect(other.place).toBeUndefined();
    expect(await settled(other.turn)).toBe(true);
  });

  it('SPEC §14 lanes: a call cancelled while it waits leaves the line at once, and the ones behind move up', async () => {
    const lanes = new WorkspaceLanes(scope);
    const holder = lanes.enter('/w', 'op1', 'a', never());
    const controller = new AbortController();
    const cancelled = lanes.enter('/w', 'op2', 'b', controller.signal);
    const behind = lanes.enter('/w', 'op3', 'c', never());
    controller.abort();
    expect(await settled(cancelled.turn)).toBe(true);
    expect(lanes.placeOf('op2')).toBeUndefined();
    expect(lanes.placeOf('op3')).toEqual({ workspace: '/w', behind: 'op1', position: 1 });
    cancelled.release(); // it never held the workspace: nothing is handed on
    expect(await settled(behind.turn)).toBe(false);
    holder.release();
    expect(await settled(behind.turn)).toBe(true);
  });

  it('SPEC §14 lanes: a call aborted after its turn came keeps the workspace until it releases it', async () => {
    const lanes = new WorkspaceLanes(scope);
    const holder = lanes.enter('/w', 'op1', 'a', never());
    const controller = new AbortController();
    const next = lanes.enter('/w', 'op2', 'b', controller.signal);
    const last = lanes.enter('/w', 'op3', 'c', never());
    holder.release();
    await next.turn;
    controller.abort(); // its command is being killed: the workspace is still its own
    expect(await settled(last.turn)).toBe(false);
    next.release();
    expect(await settled(last.turn)).toBe(true);
  });

  it('SPEC §14 lanes: the same call sent again is found while it waits, not once it runs', () => {
    const lanes = new WorkspaceLanes(scope);
    const holder = lanes.enter('/w', 'op1', 'same', never());
    expect(lanes.waitingWith('/w', 'same')).toBeUndefined(); // running: a new call runs again
    lanes.enter('/w', 'op2', 'same', never());
    expect(lanes.waitingWith('/w', 'same')).toBe('op2');
    expect(lanes.waitingWith('/w', 'other')).toBeUndefined();
    expect(lanes.waitingWith('/elsewhere', 'same')).toBeUndefined();
    holder.release();
    expect(lanes.waitingWith('/w', 'same')).toBeUndefined();
  });

  it('SPEC §14 lanes: the workspace is the nearest directory holding .git (a repository or a worktree), else the scope', async () => {
    const root = await mkdtemp(join(scope, 'tree-'));
    const repo = join(root, 'repo');
    const worktree = join(root, 'worktree');
    await mkdir(join(repo, '.git'), { recursive: true });
    await mkdir(join(repo, 'src', 'deep'), { recursive: true });
    await mkdir(join(worktree, 'src'), { recursive: true });
    await writeFile(join(worktree, '.git'), 'gitdir: ../repo/.git/worktrees/w\n');
    await mkdir(join(root, 'plain'), { recursive: true });
    const lanes = new WorkspaceLanes(root);
    expect(lanes.workspaceOf(join(repo, 'src', 'deep'))).toBe(repo);
    expect(lanes.workspaceOf(repo)).toBe(repo);
    expect(lanes.workspaceOf(join(worktree, 'src'))).toBe(worktree);
    expect(lanes.workspaceOf(join(root, 'plain'))).toBe(root);
  });
});
