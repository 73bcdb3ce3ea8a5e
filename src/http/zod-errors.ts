/** Turns a zod failure into our 400: the first problem, with `param` naming the field the way OpenAI does. */
import type { z } from 'zod';
import { apiError, type ApiError } from './errors';

export function invalidRequest(error: z.ZodError): ApiError {
  const issue = innermost(error.issues[0]);
  if (issue.code === 'unrecognized_keys') {
    const param = paramOf([...issue.path, issue.keys[0]]);
    return apiError('invalid_request_error', `Unknown field '${param}'.`, param);
  }
  const param = paramOf(issue.path);
  return apiError('invalid_request_error', `Invalid '${param}': ${issue.message}.`, param);
}

/** For a failed union (content: string or parts), the issue of the branch that got furthest, with its full path. */
function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && first.path.length > 0 && (!best || first.path.length > best.path.length)) best = first;
  }
  return best ? innermost({ ...best, path: [...issue.path, ...best.path] }) : issue;
}

/** `['messages', 0, 'role']` -> `messages[0].role`. */
export function paramOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}
