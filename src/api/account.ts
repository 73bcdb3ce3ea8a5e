/** An account as the operator sees and changes it (`/admin/accounts`): never its password hash. */
import { z } from 'zod';
import { budgetWire } from '../limits/budget';
import { limitsObject, limitsSchema, limitsWire } from '../limits/limits';
import type { AccountRecord, AccountState } from '../store/records/account';
import { accountRole, accountStatus, displayName, emailField, grantAmount, newPassword, pageLimit, unixTime } from './fields';
import { budgetObject, budgetSchema } from './budget';
import { balanceFields, holdingsFields, holdingsObject } from './holdings';
import { keySchema } from './key';

export const accountSchema = z.strictObject({
  id: z.string(),
  /** Null for an account made for API use only. */
  email: z.string().nullable(),
  name: z.string(),
  role: accountRole,
  status: accountStatus,
  /** Whether the account can log in to the console (never the hash itself). */
  has_password: z.boolean(),
  created: unixTime,
  /** `{rpm?, tpm?, max_concurrent?}` shared by all its keys; null: none. */
  limits: limitsWire.nullable(),
  /** The budget all its keys share, with what the current period used; null: none. */
  budget: budgetSchema.nullable(),
});
export type AccountObject = z.infer<typeof accountSchema>;

export function accountObject(a: AccountRecord): AccountObject {
  return {
    id: a.id,
    email: a.email,
    name: a.name,
    role: a.role,
    status: a.status,
    has_password: a.passwordHash !== null,
    created: a.created,
    limits: a.limits && limitsObject(a.limits),
    budget: a.budget && budgetObject(a.budget),
  };
}

/** An account in the operator's list: its balance too, so a page of accounts needs no second request per row. */
export const accountListItemSchema = accountSchema.extend(balanceFields);
export type AccountListItemObject = z.infer<typeof accountListItemSchema>;

export function accountListItemObject(a: AccountState): AccountListItemObject {
  return { ...accountObject(a), balance: a.balance, reserved: a.reserved, debt: a.debt };
}

/** One account with its packages, usage totals and the current use of its limits. */
export const accountDetailSchema = accountListItemSchema.extend(holdingsFields);
export type AccountDetailObject = z.infer<typeof accountDetailSchema>;

export function accountDetailObject(a: AccountState): AccountDetailObject {
  return { ...accountListItemObject(a), ...holdingsObject(a) };
}

/** `GET /admin/accounts/:id`: the account in detail, and its keys. */
export const accountShowSchema = accountDetailSchema.extend({ keys: z.array(keySchema) });
export type AccountShowObject = z.infer<typeof accountShowSchema>;

/** `POST /admin/accounts` → 201: the account and the balance its first package gave it. */
export const createdAccountSchema = accountSchema.extend({ balance: z.number().int() });
export type CreatedAccountObject = z.infer<typeof createdAccountSchema>;

/** `GET /admin/accounts`: a page, oldest first; `has_more` says whether another follows (`after` the last id). */
export const accountPageSchema = z.strictObject({ data: z.array(accountListItemSchema), has_more: z.boolean() });
export type AccountPageObject = z.infer<typeof accountPageSchema>;

/** `POST /admin/accounts`. */
export const createAccountRequest = z.strictObject({
  email: emailField('must be an email address').nullish(),
  name: displayName.optional(),
  password: newPassword.optional(),
  role: accountRole.optional(),
  status: accountStatus.optional(),
  /** A first package of this many tokens. */
  tokens: grantAmount.optional(),
  /** `{rpm?, tpm?, max_concurrent?}`, shared by all the account's keys. */
  limits: limitsSchema.nullish(),
  /** `{tokens, period}`: a budget per UTC day, week or month, shared by all the account's keys. */
  budget: budgetWire.nullish(),
});
export type CreateAccountRequest = z.input<typeof createAccountRequest>;

/** `PATCH /admin/accounts/:id`. */
export const updateAccountRequest = z.strictObject({
  name: displayName.optional(),
  /** Null removes the password (no console login). */
  password: newPassword.nullish(),
  role: accountRole.optional(),
  status: accountStatus.optional(),
  /** Replaces the account's limits; null (or {}) removes them. */
  limits: limitsSchema.nullish(),
  /** Replaces the account's budget (what the period used still counts); null removes it. */
  budget: budgetWire.nullish(),
});
export type UpdateAccountRequest = z.input<typeof updateAccountRequest>;

/** `GET /admin/accounts` query. */
export const accountListQuery = z.strictObject({
  /** In the email or the name. */
  search: z.string().max(254).optional(),
  /** The last account id of the page before. */
  after: z.string().min(1).optional(),
  limit: pageLimit,
});
export type AccountListQuery = z.input<typeof accountListQuery>;
