/** The account as its holder sees it in the self-service API (`/console/api`): register, log in, log out, `me`, password. */
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH } from '../accounts/password';
import type { AccountRecord, AccountState } from '../store/records/account';
import { accountRole, accountStatus, emailField, newPassword, unixTime } from './fields';
import { budgetObject, budgetSchema } from './budget';
import { balanceFields } from './holdings';
import { packageObject, packageSchema } from './package';
import { usageTotalsObject, usageTotalsSchema } from './usage';

const email = emailField('must be a string');

/** `POST /console/api/register`. */
export const registerRequest = z.strictObject({
  email,
  password: newPassword,
  name: z.string({ error: 'must be a string' }).trim().max(200, 'must be at most 200 characters').optional(),
});
export type RegisterRequest = z.input<typeof registerRequest>;

/** `POST /console/api/login`: the password is not length-checked here, so a wrong one is just wrong. */
export const loginRequest = z.strictObject({
  email,
  password: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(MAX_PASSWORD_LENGTH),
});
export type LoginRequest = z.input<typeof loginRequest>;

/** `POST /console/api/logout`: `everywhere` ends every session of the account, not only this one. */
export const logoutRequest = z.strictObject({
  everywhere: z.boolean({ error: 'must be true or false' }).optional(),
});
export type LogoutRequest = z.input<typeof logoutRequest>;

export const loggedOutSchema = z.strictObject({ logged_out: z.literal(true) });
export type LoggedOutObject = z.infer<typeof loggedOutSchema>;

/**
 * `POST /console/api/password`: the current password (checked, and throttled, as a login's is) and the new one (held
 * to the same rules as at registration).
 */
export const passwordChangeRequest = z.strictObject({
  current_password: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(MAX_PASSWORD_LENGTH),
  new_password: newPassword,
});
export type PasswordChangeRequest = z.input<typeof passwordChangeRequest>;

/** A changed password: this session goes on; `sessions_ended` says how many others of the account it ended. */
export const passwordChangedSchema = z.strictObject({ password_changed: z.literal(true), sessions_ended: z.number().int().nonnegative() });
export type PasswordChangedObject = z.infer<typeof passwordChangedSchema>;

/** Register and login answer with it. */
export const ownAccountSchema = z.strictObject({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: accountRole,
  status: accountStatus,
  created: unixTime,
});
export type OwnAccountObject = z.infer<typeof ownAccountSchema>;

export function ownAccountObject(a: AccountRecord): OwnAccountObject {
  return { id: a.id, email: a.email ?? '', name: a.name, role: a.role, status: a.status, created: a.created };
}

/** `GET /console/api/me`. */
export const meSchema = ownAccountSchema.extend({
  ...balanceFields,
  packages: z.array(packageSchema),
  usage: usageTotalsSchema,
  /** The account's budget, with what the current period used; null: none. */
  budget: budgetSchema.nullable(),
});
export type MeObject = z.infer<typeof meSchema>;

export function meObject(a: AccountState): MeObject {
  return {
    ...ownAccountObject(a),
    balance: a.balance,
    reserved: a.reserved,
    debt: a.debt,
    packages: a.packages.map(packageObject),
    usage: usageTotalsObject(a.usage),
    budget: a.budget && budgetObject(a.budget),
  };
}
