/**
 * The charge, shown to the client: a metered JSON answer's headers, and the extra fields of a stream's usage, say the
 * tokens the request was charged and the account's balance after it (the numbers of its ledger record). Header names
 * are lower case; the usage fields carry a prefix that no SDK reads.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { BALANCE_HEADER, CHARGED_HEADER, TOOL_HEADER } from '../http/http-headers';
import type { HeldAnswer } from './relay-outcome';

export { BALANCE_HEADER, CHARGED_HEADER, TOOL_HEADER };
export const CHARGED_FIELD = 'tokenmeter_charged_tokens';
export const BALANCE_FIELD = 'tokenmeter_balance_tokens';
export const TOOL_FIELD = 'tokenmeter_tool_tokens';

/** What a settled request was charged, and the balance after it (undefined when the store could not say at once). */
export interface ShownCharge {
  chargedTokens: number;
  balance: number | undefined;
  /** Of the charged tokens, those for hosted tool calls (a line of its own; shown only when not 0). */
  toolTokens?: number;
}

/** Adds the charge headers to a head about to be written (no balance header when the balance is unknown). */
export function addChargeHeaders(headers: OutgoingHttpHeaders, c: ShownCharge): void {
  headers[CHARGED_HEADER] = String(c.chargedTokens);
  if (c.balance !== undefined) headers[BALANCE_HEADER] = String(c.balance);
  if (c.toolTokens) headers[TOOL_HEADER] = String(c.toolTokens);
}

/** Adds the charge fields to a stream's usage object. */
export function addChargeFields(usage: Record<string, unknown>, c: ShownCharge): void {
  usage[CHARGED_FIELD] = c.chargedTokens;
  if (c.balance !== undefined) usage[BALANCE_FIELD] = c.balance;
  if (c.toolTokens) usage[TOOL_FIELD] = c.toolTokens;
}

/** Writes a whole answer with the charge in its head (unless the client already left). */
export function answerCharged(res: ServerResponse, held: HeldAnswer, c: ShownCharge): void {
  if (res.destroyed) return;
  const { status, headers, body } = held;
  headers['content-length'] = body.length;
  addChargeHeaders(headers, c);
  res.writeHead(status, headers);
  res.end(body);
}
