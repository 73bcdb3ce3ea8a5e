/**
 * The account holder's own account: register (when ACCOUNT_REGISTRATION=open), log in, log out, `me`, and a new
 * password (which ends every other session of the account and keeps the one it was made in).
 *
 * What a taken email reveals at registration: that it is taken (409 `email_taken`). Without email delivery there is
 * no way to answer a taken and a fresh address alike and still tell a real registrant why they cannot log in; so every
 * registration (taken or not) counts against the client's address, which bounds enumeration and account spam to
 * REGISTRATIONS_PER_HOUR per address, in a budget apart from failed logins (behind a proxy without TRUST_PROXY every
 * client shares one address, and sign-ups must not lock them all out of logging in). Login answers the same 401 for an
 * unknown email, a wrong password and a disabled account, after the same scrypt work.
 */
import { randomBytes } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { LoginThrottle } from '../accounts/login-throttle';
import { hashPassword, verifyPassword } from '../accounts/password';
import { sessionCookieValue, type Sessions } from '../accounts/sessions';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import type { Logger } from '../observability/logger';
import type { GuardedHandler, StoreGuard } from '../http/store-guard';
import type { AccountStore } from '../store/ports/account-store';
import type { NewTrial } from '../store/records/account';
import {
  loginRequest,
  logoutRequest,
  meObject,
  ownAccountObject,
  passwordChangeRequest,
  registerRequest,
  type LoggedOutObject,
  type PasswordChangedObject,
  type SessionObject,
} from '../api';
import { sessionOf, type ConsoleSession } from '../http/request-context';
import { sessionAccount } from './session-auth';

export interface AccountRoutesDeps {
  store: AccountStore;
  sessions: Sessions;
  throttle: LoginThrottle;
  registration: 'open' | 'closed';
  /** The trial package each registration gets (SIGNUP_TOKENS); undefined: none. */
  trial: NewTrial | undefined;
  logger: Logger;
  guard: StoreGuard;
  secure: (req: Request) => boolean;
  /** Runs before the routes that need a session. */
  requireSession: RequestHandler;
  /** The request's live session, if any (requireSession's check, without its 401). */
  liveSession: (req: Request, res: Response) => Promise<ConsoleSession | undefined>;
}

const WRONG = apiError('invalid_credentials', 'The email or password is wrong, or the account is disabled.');
const WRONG_CURRENT = apiError('invalid_request_error', 'The current password is wrong.', 'current_password');
const tooMany = (res: Response, retryAfterSeconds: number) =>
  sendError(res, apiError('too_many_attempts', `Too many failed attempts; try again in ${retryAfterSeconds} s.`), {
    'retry-after': String(retryAfterSeconds),
  });

export function accountRoutes(deps: AccountRoutesDeps): Router {
  const { guard, requireSession } = deps;
  const router = Router();
  router.post('/register', guard(register(deps)));
  router.post('/login', guard(login(deps)));
  router.post('/logout', guard(logout(deps)));
  router.post('/password', requireSession, guard(changePassword(deps)));
  // The console asks this first: 200 either way, so a signed-out page logs no failed request.
  router.get(
    '/session',
    guard(async (req, res) => {
      const found = await deps.liveSession(req, res);
      const answer: SessionObject = found ? { signed_in: true, account: meObject(found.account) } : { signed_in: false };
      res.json(answer);
    }),
  );
  router.get(
    '/me',
    requireSession,
    guard(async (_req, res) => {
      res.json(meObject(sessionAccount(res)));
    }),
  );
  return router;
}

const address = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** POST /register: a member account, when registration is open; every attempt counts against the address. */
function register(deps: AccountRoutesDeps): GuardedHandler {
  const { store, throttle, logger } = deps;
  return async (req, res) => {
    if (deps.registration !== 'open') {
      return sendError(res, apiError('registration_closed', 'Registration is closed: ask the operator for an account.'));
    }
    const parsed = registerRequest.safeParse(req.body ?? {});
    if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
    const admission = await throttle.admitRegistration(address(req));
    if (!admission.admitted) return tooMany(res, admission.retryAfterSeconds);
    const { email, password, name } = parsed.data;
    const created = await store.createAccount({
      email,
      name: name ?? '',
      passwordHash: await hashPassword(password),
      role: 'member',
      status: 'active',
      // Credited in the step that makes the account: an email already taken (a second registration, a retried
      // request) makes nothing and so grants nothing.
      trial: deps.trial,
    });
    if (created.kind === 'email_taken') {
      return sendError(res, apiError('email_taken', 'An account with this email exists: log in instead.', 'email'));
    }
    // Not refunded: a registration costs a scrypt hash and makes an account, so an address gets so many per hour.
    logger.info({ accountId: created.account.id }, 'account registered');
    res.status(201).json(ownAccountObject(created.account));
  };
}

/** POST /login: a fresh session for a right email and password of an active account; the same 401 otherwise. */
function login(deps: AccountRoutesDeps): GuardedHandler {
  const { store, sessions, throttle, logger } = deps;
  // Verifying against this when the email is unknown takes as long as a real check, so timing tells nothing.
  let decoy: Promise<string> | undefined;
  const decoyHash = () => (decoy ??= hashPassword(randomBytes(16).toString('hex')));
  return async (req, res) => {
    const parsed = loginRequest.safeParse(req.body ?? {});
    if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
    const { email, password } = parsed.data;
    const admission = await throttle.admit(email, address(req));
    if (!admission.admitted) return tooMany(res, admission.retryAfterSeconds);
    const account = await store.findAccountByEmail(email);
    const hash = account?.passwordHash ?? (await decoyHash());
    const matches = await verifyPassword(password, hash);
    if (!account || account.passwordHash === null || !matches || account.status !== 'active') {
      logger.info({ accountId: account?.id }, 'console login refused');
      return sendError(res, WRONG);
    }
    await throttle.succeeded(admission.ticket);
    // Whatever session cookie came with the request is ended: the login always gets a fresh id (no fixation).
    await sessions.end(sessionCookieValue(req.headers.cookie));
    const value = await sessions.start(account);
    res.setHeader('set-cookie', sessions.cookie(value, { secure: deps.secure(req) }));
    logger.info({ accountId: account.id }, 'console login');
    res.json(ownAccountObject(account));
  };
}

/** POST /logout: this session, or every session of the account (`everywhere`). */
function logout(deps: AccountRoutesDeps): GuardedHandler {
  const { sessions } = deps;
  return async (req, res) => {
    const parsed = logoutRequest.safeParse(req.body ?? {});
    if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
    const cookie = sessionCookieValue(req.headers.cookie);
    if (parsed.data.everywhere) {
      const session = await sessions.resume(cookie);
      if (session) await sessions.endAll(session.accountId);
    } else {
      await sessions.end(cookie);
    }
    res.setHeader('set-cookie', sessions.clearCookie({ secure: deps.secure(req) }));
    // The model page signs out with a plain form (it runs no script): a browser navigating here goes on to sign-in.
    if (req.accepts(['application/json', 'text/html']) === 'text/html') return res.redirect(303, '/console/signin');
    const answer: LoggedOutObject = { logged_out: true };
    res.json(answer);
  };
}

/** POST /password: a new password, checked and throttled as a login; every other session of the account ends. */
function changePassword(deps: AccountRoutesDeps): GuardedHandler {
  const { store, sessions, throttle, logger } = deps;
  return async (req, res) => {
    const parsed = passwordChangeRequest.safeParse(req.body ?? {});
    if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
    const account = sessionAccount(res);
    // Counted as a login attempt of the account and the address: a stolen session cannot guess the password faster.
    const admission = await throttle.admit(account.email ?? account.id, address(req));
    if (!admission.admitted) return tooMany(res, admission.retryAfterSeconds);
    if (account.passwordHash === null || !(await verifyPassword(parsed.data.current_password, account.passwordHash))) {
      logger.info({ accountId: account.id }, 'console password change refused');
      return sendError(res, WRONG_CURRENT);
    }
    const passwordHash = await hashPassword(parsed.data.new_password);
    // The new hash first: from this moment every session started under the old one is refused (its stamp differs).
    const updated = await store.updateAccount(account.id, { passwordHash });
    if (!updated) return sendError(res, apiError('session_required', 'Log in first: this route needs a console session.'));
    const cookie = sessionCookieValue(req.headers.cookie);
    const ended = await sessions.keepOnly(cookie, updated);
    await throttle.succeeded(admission.ticket);
    const created = sessionOf(res).sessionCreated;
    res.setHeader('set-cookie', sessions.cookie(cookie!, { secure: deps.secure(req) }, created));
    logger.info({ accountId: account.id, sessionsEnded: ended }, 'console password changed');
    const body: PasswordChangedObject = { password_changed: true, sessions_ended: ended };
    res.json(body);
  };
}
