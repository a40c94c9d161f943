// The chunks waiting for the endpoint, bounded: the source is never slowed down by a slow
// endpoint; when more than `capacity` chunks wait, the oldest is dropped and counted.
export class ChunkQueue {
  readonly #capacity: number;
  readonly #handle: (chunk: string) => Promise<void>;
  readonly #waiting: string[] = [];
  #running: Promise<void> | undefined;
  #dropped = 0;
  #stopped = false;

  constructor(capacity: number, handle: (chunk: string) => Promise<void>) {
    this.#capacity = capacity;
    this.#handle = handle;
  }

  /** Chunks dropped because the queue was full, or still waiting when it was stopped. */
  get dropped(): number {
    return this.#dropped;
  }

  push(chunk: string): void {
    if (this.#stopped) {
      this.#dropped++;
      return;
    }
    this.#waiting.push(chunk);
    if (this.#waiting.length > this.#capacity) {
      this.#waiting.shift();
      this.#dropped++;
    }
    this.#running ??= this.#drain();
  }

  /** Resolves when every chunk pushed so far has been handled. */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** Drops what waits and accepts nothing more; resolves when the chunk in hand is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#dropped += this.#waiting.splice(0).length;
    await this.idle();
  }

  async #drain(): Promise<void> {
    for (let chunk = this.#waiting.shift(); chunk !== undefined; chunk = this.#waiting.shift()) {
      try {
        await this.#handle(chunk);
      } catch {
        // The handler reports its own failures; one must not stop the chunks after it.
      }
    }
    this.#running = undefined;
  }
}
