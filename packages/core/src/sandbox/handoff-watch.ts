// R7.11, the detection layer: the hand-off paths of the scope are snapshotted before and after each
// command. A change while a command ran is that command's hand-off write, reported in its result
// and audit line; any change (a command's, or one made outside, such as an editor rewriting
// .git/config) renews the protection, since a bind mount keeps showing the file it was made on.
import {
  handoffChanges,
  snapshotHandoff,
  type HandoffChange,
  type HandoffSnapshot,
} from './handoff.js';

export class HandoffWatch {
  readonly #scope: string;
  readonly #allow: readonly string[];
  readonly #changed: () => void;
  #last: HandoffSnapshot;

  /** `changed` runs (synchronously) whenever the hand-off paths differ from the last snapshot. */
  constructor(scope: string, allow: readonly string[], changed: () => void) {
    this.#scope = scope;
    this.#allow = allow;
    this.#changed = changed;
    this.#last = snapshotHandoff(scope, allow);
  }

  /** Before a command runs: the snapshot its changes are measured from. */
  before(): HandoffSnapshot {
    return this.#take();
  }

  /** After it ended: what changed while it ran (other commands running meanwhile included). */
  after(before: HandoffSnapshot): HandoffChange[] {
    this.#take();
    return handoffChanges(before, this.#last);
  }

  #take(): HandoffSnapshot {
    const now = snapshotHandoff(this.#scope, this.#allow);
    const changed = handoffChanges(this.#last, now).length > 0;
    this.#last = now;
    if (changed) this.#changed();
    return now;
  }
}
