/**
 * The Redis store's event outbox, a service of its own: each account's stream {A}:ev (written by the wrapped scripts,
 * lua/events/wrap.lua), the `evacc` set of accounts that may have events, and which events to write. RedisStore's
 * parts write their events through it; the delivery worker opens one on a connection of its own (create-store.ts).
 */
import { newId } from '../ids';
import type { EventOutbox } from '../ports/event-outbox';
import { NO_EVENTS, type EventType, type EventWants, type LowBalanceDefault, type OutboxEvent } from '../records/events';
import { packageExpiryTemplate } from './event-templates';
import { luaScript } from './lua-scripts';
import { defineScripts, type RunScript } from './define-scripts';
import type { RedisShared } from './redis-shared';

export class RedisOutbox implements EventOutbox {
  private wants: EventWants = NO_EVENTS;
  private readonly outboxScripts;

  constructor(private readonly shared: RedisShared) {
    this.outboxScripts = defineScripts(shared.redis, {
      tmSetLowBalance: luaScript('events/set-low-balance.lua'),
      tmAccountCreated: luaScript('events/account-created.lua'),
      tmPackageExpiry: luaScript('events/package-expiry.lua'),
    });
  }

  /** The balance.low threshold of an account without its own. */
  get lowBalance(): LowBalanceDefault {
    return this.wants.lowBalance;
  }

  wantEvents(wants: EventWants): void {
    this.wants = wants;
  }

  private get marks(): string {
    return this.shared.keys.global('evacc');
  }

  /**
   * Runs `plain` when no event is wanted (`events` undefined), else `wrapped` with the account's outbox and the event
   * arguments (runWrapped).
   */
  async withEvents(
    plain: RunScript,
    wrapped: RunScript,
    accountId: string,
    keys: string[],
    input: Record<string, unknown>,
    events: Record<string, unknown> | undefined,
  ): Promise<unknown> {
    if (events === undefined) return plain(keys, [JSON.stringify(input)]);
    return this.runWrapped(wrapped, accountId, keys, input, events);
  }

  /**
   * Runs a wrapped script (lua/events/wrap.lua) with the account's outbox and the event arguments (the input's `ev`),
   * and returns the original script's reply. Marks the account only when the step wrote the first event of an empty
   * outbox: most steps write none, and under a usage.settled endpoint's load the outbox stays marked between hand-ons.
   */
  async runWrapped(
    wrapped: RunScript,
    accountId: string,
    keys: string[],
    input: Record<string, unknown>,
    ev: Record<string, unknown>,
  ): Promise<unknown> {
    const [mark, reply] = (await wrapped([...keys, this.shared.keys.slot(accountId, 'ev')], [JSON.stringify({ ...input, ev })])) as [
      number,
      unknown,
    ];
    if (Number(mark) === 1) await this.markEvents(accountId);
    return reply;
  }

  wanted(type: EventType): boolean {
    return this.wants.types.has(type);
  }

  /**
   * Marks the account as having events, after a step that may have written some (a spare mark costs one read). A mark
   * lost to a failure here is found by the worker's sweep of every account, so the step's own outcome stands.
   */
  async markEvents(accountId: string): Promise<void> {
    await this.shared.redis.sadd(this.marks, accountId).catch(() => 0);
  }

  /** account.created, once the account exists (its own step: the account's record is made by plain commands). */
  /** account.created, and package.granted for its trial package (`granted`), as wanted, in one step. */
  async accountCreated(accountId: string, data: string, granted?: string): Promise<void> {
    const created = this.wanted('account.created');
    const trial = granted !== undefined && this.wanted('package.granted');
    if (!created && !trial) return;
    await this.outboxScripts.tmAccountCreated(
      [this.shared.keys.slot(accountId, 'a'), this.shared.keys.slot(accountId, 'ev')],
      [created ? newId('evt') : '', data, trial ? newId('evt') : '', granted ?? ''],
    );
    await this.markEvents(accountId);
  }

  async eventAccounts(sweep: boolean): Promise<string[]> {
    if (!sweep) return this.shared.redis.smembers(this.marks);
    return this.shared.redis.zrange(this.shared.keys.global('accounts'), 0, -1);
  }

  async readEvents(accountId: string, limit: number): Promise<OutboxEvent[]> {
    const entries = await this.shared.redis.xrange(this.shared.keys.slot(accountId, 'ev'), '-', '+', 'COUNT', limit);
    return entries.map(([cursor, flat]) => {
      const f: Record<string, string> = {};
      for (let i = 0; i < flat.length; i += 2) f[flat[i]] = flat[i + 1];
      return { id: f.id, type: f.type as EventType, accountId, created: Number(f.created), data: f.data, cursor };
    });
  }

  async dropEvents(accountId: string, cursors: readonly string[]): Promise<void> {
    const stream = this.shared.keys.slot(accountId, 'ev');
    if (cursors.length > 0) await this.shared.redis.xdel(stream, ...cursors);
    if ((await this.shared.redis.xlen(stream)) > 0) return;
    // Unmarked, then checked again: an event written meanwhile is marked again by its writer (the first into an empty
    // outbox marks it) or by this check. Writers rely on this: a non-empty outbox stays marked.
    await this.shared.redis.srem(this.marks, accountId);
    if ((await this.shared.redis.xlen(stream)) > 0) await this.markEvents(accountId);
  }

  async packageEvents(accountId: string, warnSeconds: number): Promise<void> {
    const expiring = this.wanted('package.expiring');
    const expired = this.wanted('package.expired');
    if (!expiring && !expired) return;
    const written = await this.outboxScripts.tmPackageExpiry(
      [this.shared.keys.slot(accountId, 'p'), this.shared.keys.slot(accountId, 'pe'), this.shared.keys.slot(accountId, 'ev')],
      [
        JSON.stringify({
          now: Math.floor(this.shared.now() / 1000),
          warn: warnSeconds,
          expiring,
          expired,
          id: newId('evt'),
          data: packageExpiryTemplate(accountId),
        }),
      ],
    );
    if (Number(written) > 0) await this.markEvents(accountId);
  }

  async setLowBalance(accountId: string, tokens: number | null): Promise<boolean> {
    return Number(await this.outboxScripts.tmSetLowBalance([this.shared.keys.slot(accountId, 'a')], [tokens ?? ''])) === 1;
  }
}
