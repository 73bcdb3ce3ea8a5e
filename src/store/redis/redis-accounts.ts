/** The Redis store's accounts: creating, reading, listing and updating them, grants, and the upgrade from before accounts. */
import { budgetStatus, encodeBudget } from '../../limits/budget';
import { encodeLimits } from '../../limits/limits';
import { matchesSearch, newId } from '../ids';
import { accountData, accountDisabledData, packageGrantedData } from '../records/events';
import type { AccountStore } from '../ports/account-store';
import {
  isGrantable,
  MAX_UNSPENT_TOKENS,
  type AccountPatch,
  type AccountQuery,
  type AccountRecord,
  type AccountState,
  type CreateAccountResult,
  type GrantOptions,
  type GrantResult,
  type NewAccount,
  type NewPackage,
  type NewTrial,
  TRIAL_GRANT,
} from '../records/account';
import { lowBalanceEvent } from './event-templates';
import { luaScript, luaWithEvents } from './lua-scripts';
import { defineScripts } from './define-scripts';
import { migrateLegacyKeys } from './redis-migration';
import type { RedisOutbox } from './redis-outbox';
import type { RedisShared } from './redis-shared';
import { StoreReplyError, pairs, parseAccount, parseAccountState, parsePackage, tuple } from './redis-records';

export class RedisAccounts implements AccountStore {
  private readonly accountScripts;

  constructor(
    private readonly shared: RedisShared,
    private readonly outbox: RedisOutbox,
  ) {
    this.accountScripts = defineScripts(shared.redis, {
      tmGrant: luaScript('accounts/grant.lua'),
      tmGrantEv: luaWithEvents('accounts/grant.lua', { after: 'events/after-grant.lua' }),
      tmUpdateAccount: luaScript('accounts/update-account.lua'),
      tmUpdateAccountEv: luaWithEvents('accounts/update-account.lua', {
        before: 'events/before-update-account.lua',
        after: 'events/after-update-account.lua',
      }),
      tmAccountState: luaScript('accounts/account-state.lua'),
      tmCreateAccount: luaScript('accounts/create-account.lua'),
      tmMigrateKey: luaScript('accounts/migrate-key.lua'),
    });
  }

  /**
   * Moves keys written before accounts into accounts of their own (see MIGRATE_KEY); a no-op once done. Safe to run
   * from several processes at once. Resolves to the number of keys this call migrated.
   */
  migrate(): Promise<number> {
    return migrateLegacyKeys({
      redis: this.shared.redis,
      prefix: this.shared.keys.prefix,
      migrateKey: async (keyId) =>
        Number(
          await this.accountScripts.tmMigrateKey(
            [
              this.shared.keys.slot(keyId, 'k'),
              this.shared.keys.slot(keyId, 'a'),
              this.shared.keys.slot(keyId, `k:${keyId}`),
              this.shared.keys.slot(keyId, 'keys'),
              this.shared.keys.slot(keyId, 'ra'),
              this.shared.keys.slot(keyId, 't'),
              this.shared.keys.slot(keyId, 'u'),
            ],
            [keyId],
          ),
        ),
    });
  }

  async createAccount(input: NewAccount): Promise<CreateAccountResult> {
    const id = newId('acc');
    const created = Math.floor(Date.now() / 1000);
    const { trial = null, ...fields } = input;
    const pkg = trial && trialPackage(trial, created);
    const hash = {
      email: input.email ?? '',
      name: input.name,
      password_hash: input.passwordHash ?? '',
      role: input.role,
      status: input.status,
      created,
      debt: 0,
      reserved: 0,
      rl: encodeLimits(input.limits),
      bg: encodeBudget(input.budget),
      // The trial is the account's first grant (balance.low's default threshold is a share of the last).
      ...(pkg ? { lg: pkg.tokens } : {}),
    };
    await this.accountScripts.tmCreateAccount(
      [this.shared.keys.slot(id, 'a'), this.shared.keys.slot(id, 'p'), this.shared.keys.slot(id, 'g')],
      [
        JSON.stringify({
          package_id: pkg?.id ?? '',
          package: pkg ? `${pkg.tokens}:${pkg.expiresAt ?? 0}:${pkg.tokens}:${created}` : '',
          fields: Object.entries(hash).flat().map(String),
        }),
      ],
    );
    // The email index lives outside the account's slot: claimed after the account exists, undone when taken, and the
    // account is listed last, so a half-made account is never reachable.
    if (input.email !== null && (await this.shared.redis.set(this.shared.keys.global(`email:${input.email}`), id, 'NX')) === null) {
      await this.shared.redis.del(this.shared.keys.slot(id, 'a'), this.shared.keys.slot(id, 'p'), this.shared.keys.slot(id, 'g'));
      return { kind: 'email_taken' };
    }
    // Written before the account is listed: a crash between the two leaves an event for an unlisted account, never a
    // listed account without its event.
    await this.outbox.accountCreated(id, accountData({ id, ...fields }), pkg ? packageGrantedData(id, pkg, TRIAL_GRANT) : undefined);
    await this.shared.redis.zadd(this.shared.keys.global('accounts'), 0, id);
    const budget = input.budget ? budgetStatus(input.budget, undefined, this.shared.now()) : null;
    return { kind: 'created', account: { id, ...fields, created, limits: input.limits ?? null, budget } };
  }

  async getAccount(accountId: string): Promise<AccountState | undefined> {
    const reply = await this.accountScripts.tmAccountState(
      [
        this.shared.keys.slot(accountId, 'a'),
        this.shared.keys.slot(accountId, 'p'),
        this.shared.keys.slot(accountId, 'r'),
        this.shared.keys.slot(accountId, 'ra'),
        this.shared.keys.slot(accountId, 't'),
      ],
      [this.shared.windowMs],
    );
    const parts = tuple(reply, 'ACCOUNT_STATE');
    if (parts.length === 0) return undefined;
    return parseAccountState(accountId, parts as [string[], string[], string[], number, unknown[]], this.shared.now());
  }

  /**
   * One ACCOUNT_STATE script per account, all issued before any reply is awaited: ioredis writes them back to back
   * and the replies arrive together, so a page costs one round trip, not one per account. Not a MULTI or a pipeline
   * object: the accounts live in different slots of a cluster, where those would be refused.
   */
  async getAccounts(accountIds: readonly string[]): Promise<(AccountState | undefined)[]> {
    return Promise.all(accountIds.map((id) => this.getAccount(id)));
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | undefined> {
    const id = await this.shared.redis.get(this.shared.keys.global(`email:${email}`));
    return id === null ? undefined : this.accountRecord(id);
  }

  private async accountRecord(id: string): Promise<AccountRecord | undefined> {
    const h = await this.shared.redis.hgetall(this.shared.keys.slot(id, 'a'));
    return h.created === undefined ? undefined : parseAccount(id, h, this.shared.now());
  }

  async listAccounts(q: AccountQuery): Promise<AccountRecord[]> {
    const search = q.search?.toLowerCase();
    const out: AccountRecord[] = [];
    let from = q.after !== undefined ? `(${q.after}` : '-';
    const page = Math.max(q.limit, 100);
    while (out.length < q.limit) {
      const ids = await this.shared.redis.zrangebylex(this.shared.keys.global('accounts'), from, '+', 'LIMIT', 0, page);
      const records = await Promise.all(ids.map((id) => this.accountRecord(id)));
      for (const r of records) {
        if (r && (search === undefined || matchesSearch(r, search)) && out.length < q.limit) out.push(r);
      }
      if (ids.length < page) break;
      from = `(${ids[ids.length - 1]}`;
    }
    return out;
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | undefined> {
    const fields: string[] = [];
    if (patch.name !== undefined) fields.push('name', patch.name);
    if (patch.status !== undefined) fields.push('status', patch.status);
    if (patch.role !== undefined) fields.push('role', patch.role);
    if (patch.passwordHash !== undefined) fields.push('password_hash', patch.passwordHash ?? '');
    if (patch.limits !== undefined) fields.push('rl', encodeLimits(patch.limits));
    if (patch.budget !== undefined) fields.push('bg', encodeBudget(patch.budget));
    const disabling = patch.status === 'disabled' && this.outbox.wanted('account.disabled');
    const reply = await this.outbox.withEvents(
      this.accountScripts.tmUpdateAccount,
      this.accountScripts.tmUpdateAccountEv,
      accountId,
      [this.shared.keys.slot(accountId, 'a')],
      { fields },
      disabling ? { disabled: { id: newId('evt'), data: accountDisabledData(accountId) } } : undefined,
    );
    const flat = tuple(reply, 'UPDATE_ACCOUNT') as string[];
    return flat.length === 0 ? undefined : parseAccount(accountId, pairs(flat), this.shared.now());
  }

  async grantPackage(accountId: string, input: NewPackage, options: GrantOptions = {}): Promise<GrantResult> {
    if (!isGrantable(input.tokens)) return { kind: 'invalid_tokens' };
    const id = newId('pkg');
    const granted = this.outbox.wanted('package.granted');
    const low = this.outbox.wanted('balance.low');
    const reply = await this.outbox.withEvents(
      this.accountScripts.tmGrant,
      this.accountScripts.tmGrantEv,
      accountId,
      [this.shared.keys.slot(accountId, 'a'), this.shared.keys.slot(accountId, 'p'), this.shared.keys.slot(accountId, 'g')],
      { id, tokens: input.tokens, expires_at: input.expiresAt ?? 0, once: options.once ?? '', max_unspent: MAX_UNSPENT_TOKENS },
      granted || low
        ? {
            granted: granted ? { id: newId('evt'), data: packageGrantedData(accountId, { id, ...input }, options.once) } : undefined,
            low: low ? lowBalanceEvent(accountId, this.outbox.lowBalance) : undefined,
          }
        : undefined,
    );
    const [tag, a, b] = tuple(reply, 'GRANT');
    if (tag === 'not_found') return { kind: 'account_not_found' };
    if (tag === 'limit') return { kind: 'balance_limit' };
    if (tag === 'duplicate') return { kind: 'duplicate', package: typeof b === 'string' ? parsePackage(String(a), b) : undefined };
    if (tag !== 'ok') throw new StoreReplyError(`GRANT replied ${String(tag)}`);
    return {
      kind: 'granted',
      package: { id, tokens: input.tokens, remaining: Number(a), expiresAt: input.expiresAt, created: Number(b) },
    };
  }
}

/** A new account's trial package, expiring `validDays` after the account's creation. */
function trialPackage(trial: NewTrial, created: number): { id: string; tokens: number; expiresAt: number | null } {
  return { id: newId('pkg'), tokens: trial.tokens, expiresAt: trial.validDays === null ? null : created + trial.validDays * 86_400 };
}
