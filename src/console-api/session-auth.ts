/**
 * The console's session check: a live session cookie of an active account, or 401. The account is read from the
 * store on every request, so disabling it ends its sessions at once on every process.
 */
import type { NextFunction, Request, Response } from 'express';
import { sessionCookieValue, stampOf, type Sessions } from '../accounts/sessions';
import { apiError, sendError } from '../http/errors';
import { sessionOf, signedIn, type ConsoleSession } from '../http/request-context';
import type { AccountState } from '../store/records/account';
import type { AccountStore } from '../store/ports/account-store';

const REQUIRED = apiError('session_required', 'Log in first: this route needs a console session.');

/** The signed-in account, set by requireSession. */
export function sessionAccount(res: Response): AccountState {
  return sessionOf(res).account;
}

type SessionDeps = { sessions: Sessions; store: Pick<AccountStore, 'getAccount'>; secure: (req: Request) => boolean };

/**
 * The request's live session and its account, its idle time restarted; undefined when there is none (a stale cookie
 * is cleared). What requireSession demands, and what the console's session probe reports without a 401.
 */
export function sessionCheck(deps: SessionDeps) {
  return async function liveSession(req: Request, res: Response): Promise<ConsoleSession | undefined> {
    const cookie = sessionCookieValue(req.headers.cookie);
    const session = await deps.sessions.resume(cookie);
    if (session === undefined) return undefined;
    const account = await deps.store.getAccount(session.accountId);
    const live = account !== undefined && account.status === 'active';
    if (!live || stampOf(account) !== session.stamp) {
      // Disabled: every session of the account ends, so re-enabling it brings none back. A session started under
      // an old password ends alone (sessions started since the change stay).
      if (!live) await deps.sessions.endAll(session.accountId);
      else await deps.sessions.end(cookie);
      res.setHeader('set-cookie', deps.sessions.clearCookie({ secure: deps.secure(req) }));
      return undefined;
    }
    // The cookie's Max-Age restarts with the session's idle time, so an account holder in use is never logged out.
    res.setHeader('set-cookie', deps.sessions.cookie(cookie!, { secure: deps.secure(req) }, session.created));
    return { account, sessionCreated: session.created };
  };
}

export function requireSession(deps: SessionDeps) {
  const check = sessionCheck(deps);
  return async function checkSession(req: Request, res: Response, next: NextFunction): Promise<void> {
    const found = await check(req, res);
    if (found === undefined) return sendError(res, REQUIRED);
    signedIn(res, found);
    next();
  };
}

/**
 * Who is signed in, for a page that only shows it (the model page's navigation): the account of a live session of an
 * active account under its current password, or undefined. Read-only: no idle restart, no cookie set, nothing ended.
 */
export function signedInAccount(deps: { sessions: Sessions; store: Pick<AccountStore, 'getAccount'> }) {
  return async function whoIsSignedIn(req: Request): Promise<AccountState | undefined> {
    const session = await deps.sessions.peek(sessionCookieValue(req.headers.cookie));
    if (session === undefined) return undefined;
    const account = await deps.store.getAccount(session.accountId);
    if (account === undefined || account.status !== 'active' || stampOf(account) !== session.stamp) return undefined;
    return account;
  };
}

/** Only accounts with role `admin`: the operator's routes, with a session instead of ADMIN_TOKEN. */
export function requireAdminRole(req: Request, res: Response, next: NextFunction): void {
  void req;
  if (sessionAccount(res).role !== 'admin') return sendError(res, apiError('admin_required', 'This route is for operators (role admin).'));
  next();
}
