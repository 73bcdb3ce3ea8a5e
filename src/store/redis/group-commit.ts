/**
 * Group commit: the calls a process makes in one turn of its event loop, gathered per group (an account's slot) and
 * sent as one script call per group at the end of the turn (setImmediate), instead of one call each. Under load a
 * turn holds many settlements (at 64 connections, most turns held nine or more); alone, a call goes out by itself
 * at the end of its turn, as it would have.
 */
/** Runs a group; one reply per item, in order, where an Error is that item's failure alone. */
export type SendGroup<In> = (group: readonly In[]) => Promise<readonly unknown[]>;

export interface GroupCommitOptions {
  /** The most items in one call: a busy group is split, so no one call runs long. */
  most: number;
  /**
   * Whether a whole group's failure may be one item's doing (an error reply, not a lost connection): then each item is
   * sent again alone, so a bad item fails itself only, as it did before grouping. (A step that fails inside a group
   * that ran is its item's Error reply, and is not sent again.)
   */
  oneItemsFault: (err: unknown) => boolean;
}

interface Waiting<In> {
  item: In;
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<In> {
  /** This turn's calls by group, and the map the turn before used (cleared): swapped at each flush, never made anew. */
  private pending = new Map<string, Waiting<In>[]>();
  private spare = new Map<string, Waiting<In>[]>();
  private scheduled = false;

  /** `send` runs a group (one item or more, in the order they came) and replies one reply per item, in order. */
  constructor(
    private readonly send: SendGroup<In>,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Queues `item` in `group` for the end of this turn; resolves with its own reply. */
  add(group: string, item: In): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const list = this.pending.get(group);
      if (list === undefined) this.pending.set(group, [{ item, resolve, reject }]);
      else list.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    const groups = this.pending;
    this.pending = this.spare;
    this.spare = groups;
    this.scheduled = false;
    const most = this.options.most;
    for (const list of groups.values()) {
      for (let at = 0; at < list.length; at += most) this.run(list.length <= most ? list : list.slice(at, at + most));
    }
    groups.clear();
  };

  private run(list: Waiting<In>[]): void {
    const fail = (err: unknown) => {
      if (list.length > 1 && this.options.oneItemsFault(err)) for (const w of list) this.run([w]);
      else for (const w of list) w.reject(err);
    };
    this.send(list.map((w) => w.item)).then((replies) => {
      if (replies.length !== list.length) return fail(new Error(`a group of ${list.length} got ${replies.length} replies`));
      for (let i = 0; i < list.length; i++) {
        const reply = replies[i];
        if (reply instanceof Error) list[i].reject(reply);
        else list[i].resolve(reply);
      }
    }, fail);
  }
}
