/**
 * The account port, for the routes that manage accounts and their money (the admin API, the console's sign-up and
 * session check, the product center's grants): accounts, their state, and the token packages credited to them.
 */
import type {
  AccountPatch,
  AccountQuery,
  AccountRecord,
  AccountState,
  CreateAccountResult,
  GrantOptions,
  GrantResult,
  NewAccount,
  NewPackage,
} from '../records/account';

export interface AccountStore {
  createAccount(input: NewAccount): Promise<CreateAccountResult>;
  /** Undefined when the account does not exist. */
  getAccount(accountId: string): Promise<AccountState | undefined>;
  /** Several accounts' states at once, in the order asked (undefined for an unknown id): a page of a list in one go. */
  getAccounts(accountIds: readonly string[]): Promise<(AccountState | undefined)[]>;
  /** The account with this (normalised) email. */
  findAccountByEmail(email: string): Promise<AccountRecord | undefined>;
  /** Accounts in creation order. */
  listAccounts(query: AccountQuery): Promise<AccountRecord[]>;
  /** Undefined when the account does not exist. Disabling takes effect at every process's next reserve. */
  updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | undefined>;
  /** Credits a package to the account; any debt is paid from it first. */
  grantPackage(accountId: string, input: NewPackage, options?: GrantOptions): Promise<GrantResult>;
}
