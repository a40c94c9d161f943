// R7.11, the detection layer around each command. What changed while a command ran is that
// command's hand-off write, reported in its result and audit line; any change (a command's, or
// one made outside, such as an editor rewriting .git/config) renews the protection, since a bind
// mount keeps showing the file it was made on.
//
// It must cost next to nothing per command (R7.11's budget: a few percent of a 1.4 ms call). With
// the hand-off paths mounted read-only, a command can only make the ones that did not exist, and
// only something outside can replace a mounted one: a stat of those (handoffProbes) before and
// after each command is the whole cost, and a full snapshot is taken only when one changed.
// Without mounts (`detect`), every path may change: a full snapshot is taken before and after
// each command.
import {
  handoffChanges,
  handoffProbes,
  probeState,
  snapshotHandoff,
  type HandoffChange,
  type HandoffProbes,
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

const NO_PROBES: HandoffProbes = { changing: [], replaced: [] };

export class HandoffWatch {
  readonly #options: HandoffWatchOptions;
  /** The hand-off paths when the protection was last worked out. */
  #last: HandoffSnapshot;
  #probes: HandoffProbes = NO_PROBES;
  #probed = '';

  constructor(options: HandoffWatchOptions) {
    this.#options = options;
    this.#last = snapshotHandoff(options.scope, options.allow);
    this.#arm();
  }

  /** Before a command runs (and before the pool is asked for a unit: a renewal replaces it). */
  before(): HandoffMark {
    if (!this.#mounted()) return { snapshot: this.#renewIfChanged() };
    // Changed outside since the last command (not this one's doing): renewed, not reported.
    if (probeState(this.#probes) !== this.#probed) this.#renew(this.#snapshot());
    return {};
  }

  /** After it ended: what changed while it ran (other commands running meanwhile included). */
  after(mark: HandoffMark): HandoffChange[] {
    if (!this.#mounted()) {
      const now = this.#renewIfChanged();
      return mark.snapshot === undefined ? [] : handoffChanges(mark.snapshot, now);
    }
    if (probeState(this.#probes) === this.#probed) return [];
    const now = this.#snapshot();
    const changes = handoffChanges(this.#last, now);
    this.#renew(now);
    return changes;
  }

  #mounted(): boolean {
    return this.#options.handoff().mechanism === 'mount';
  }

  #snapshot(): HandoffSnapshot {
    return snapshotHandoff(this.#options.scope, this.#options.allow);
  }

  /** `detect`: a full snapshot; a change since the last one renews (and is reported by after()). */
  #renewIfChanged(): HandoffSnapshot {
    const now = this.#snapshot();
    if (handoffChanges(this.#last, now).length > 0) this.#renew(now);
    return now;
  }

  #renew(now: HandoffSnapshot): void {
    this.#last = now;
    this.#options.changed();
    this.#arm();
  }

  /** The probes for the protection as it is now. */
  #arm(): void {
    const handoff = this.#options.handoff();
    this.#probes =
      handoff.mechanism === 'mount'
        ? handoffProbes(this.#options.scope, this.#options.allow, handoff)
        : NO_PROBES;
    this.#probed = probeState(this.#probes);
  }
}
