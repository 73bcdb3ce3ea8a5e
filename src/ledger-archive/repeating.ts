/**
 * A pass run again `intervalMs` after each one ends (never two at once), until stopped; a pass that fails is reported
 * and the next one runs. The shippers' loop: each pass looks at `stopped` to end early.
 */
export class Repeating {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private halted = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly failed: (err: Error) => void,
  ) {}

  get stopped(): boolean {
    return this.halted;
  }

  start(): void {
    this.halted = false;
    const tick = () => {
      this.running = this.pass()
        .catch(this.failed)
        .finally(() => {
          if (!this.halted) this.timer = setTimeout(tick, this.intervalMs);
        });
    };
    tick();
  }

  /** Stops, once the pass under way has ended. */
  async stop(): Promise<void> {
    this.halted = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
