// R7.11, the detection layer around each command. What changed while a command ran is that
// command's hand-off write, reported in its result and audit line; any change (a command's, or
// one made outside, such as an editor rewriting .git/config) renews the protection, since a bind
// mount keeps showing the file it was made on.
//
// It must cost next to nothing per command (R7.11's budget: a few percent of a 1.4 ms call). With
// the hand-off paths mounted read-only, a command can only make the ones that did not exist: a
// stat of those (handoffProbes) before and after each command is the whole cost, and a full
// snapshot is taken only when one changed. Changes made outside to the mounted paths are heard through
// inotify (fs.watch on their directories), which costs nothing per command. Without mounts
// (`detect`), every path may change: a full snapshot is taken before and after each command.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  handoffChanges,
  handoffProbes,
  probeState,
  snapshotHandoff,
  type HandoffChange,
  type HandoffSnapshot,
} from './handoff.js';
import type { SandboxHandoff } from './sandbox.js';

export interface HandoffWatchOptions {
  readonly scope: string;
  /** --allow-handoff-writes paths (absolute): neither protected nor watched. */
  readonly allow: readonly string[];
  /** How the hand-off files are kept now (read again after each renewal). */
  readonly handoff: () => SandboxHandoff;
  /** Renews the protection (new mounts, new warm shells); runs synchronously. */
  readonly changed: () => void;
}

/** What before() hands to after(): the snapshot a `detect` watch compares with. */
export interface HandoffMark {
  readonly snapshot?: HandoffSnapshot;
}

export class HandoffWatch {
  readonly #options: HandoffWatchOptions;
  /** The hand-off paths when the protection was last worked out. */
  #last: HandoffSnapshot;
  #probes: string[] = [];
  #probed = '';
  /** Something outside replaced a mounted path: renew before the next command. */
  #stale = false;
  #watchers: FSWatcher[] = [];

  constructor(options: HandoffWatchOptions) {
    this.#options = options;
    this.#last = snapshotHandoff(options.scope, options.allow);
    this.#arm();
  }

  /** Before a command runs (and before the pool is asked for a unit: a renewal replaces it). */
  before(): HandoffMark {
    if (!this.#mounted()) return { snapshot: this.#renewIfChanged() };
    // Changed outside since the last command (not this one's doing): renewed, not reported.
    if (this.#stale || probeState(this.#probes) !== this.#probed) {
      this.#renew(snapshotHandoff(this.#options.scope, this.#options.allow));
    }
    return {};
  }

  /** After it ended: what changed while it ran (other commands running meanwhile included). */
  after(mark: HandoffMark): HandoffChange[] {
    if (!this.#mounted()) {
      const now = this.#renewIfChanged();
      return mark.snapshot === undefined ? [] : handoffChanges(mark.snapshot, now);
    }
    if (probeState(this.#probes) === this.#probed) return [];
    const now = snapshotHandoff(this.#options.scope, this.#options.allow);
    const changes = handoffChanges(this.#last, now);
    this.#renew(now);
    return changes;
  }

  /** Stops listening for changes made outside. */
  close(): void {
    for (const watcher of this.#watchers.splice(0)) watcher.close();
  }

  #mounted(): boolean {
    return this.#options.handoff().mechanism === 'mount';
  }

  /** `detect`: a full snapshot; a change since the last one renews (and is reported by after()). */
  #renewIfChanged(): HandoffSnapshot {
    const now = snapshotHandoff(this.#options.scope, this.#options.allow);
    if (handoffChanges(this.#last, now).length > 0) this.#renew(now);
    return now;
  }

  #renew(now: HandoffSnapshot): void {
    this.#last = now;
    this.#stale = false;
    this.#options.changed();
    this.#arm();
  }

  /** The probes and the inotify watches for the protection as it is now. */
  #arm(): void {
    this.close();
    const handoff = this.#options.handoff();
    if (handoff.mechanism !== 'mount') return;
    this.#probes = handoffProbes(this.#options.scope, this.#options.allow, handoff);
    this.#probed = probeState(this.#probes);
    // A mounted path replaced outside (renamed over, removed and made again) shows up as an
    // event on its directory naming it.
    const byDirectory = new Map<string, Set<string>>();
    for (const path of handoff.protect) {
      const names = byDirectory.get(dirname(path)) ?? new Set<string>();
      names.add(basename(path));
      byDirectory.set(dirname(path), names);
    }
    for (const [dir, names] of byDirectory) {
      try {
        const watcher = watch(dir, { persistent: false }, (_, name) => {
          if (name !== null && names.has(name)) this.#stale = true;
        });
        watcher.on('error', () => watcher.close());
        this.#watchers.push(watcher);
      } catch {
        // A directory that cannot be watched: its files are renewed with the next change found.
      }
    }
  }
}
