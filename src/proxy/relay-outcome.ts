/**
 * How relaying one upstream answer went, as the relay saw it: what the exchange's settlement charges or releases, and
 * how the client's response is then finished. The relays (answer-relay.ts and the three it chooses from) return one;
 * settlement.ts settles it; nothing calls back between them, save the one port a stream's usage line needs.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { ApiError } from '../http/errors';
import type { DrainOutcome } from './upstream-drain';
import type { Usage } from './usage';

export type RelayOutcome =
  /** Nothing of the answer was served: the client is told `error`, the reservation goes back. */
  | { kind: 'refused'; error: ApiError; failure?: UpstreamFailure }
  /** The client left before any of the answer was served: the reservation goes back. */
  | { kind: 'left' }
  /**
   * The answer, or a part of it, was served: charged at `usage` when the upstream reported one, else at our counts
   * (`estimate` runs only then); then the response is finished as `reply` says.
   */
  | {
      kind: 'served';
      status: number;
      usage: Usage | undefined;
      estimate: () => number | Promise<number>;
      reply: Reply;
      failure?: UpstreamFailure;
      /** A stream whose client left was read on for its usage: how that ended. */
      drained?: DrainOutcome;
    }
  /** A stream charged at its usage line (through the relay's `charge` port), then relayed to its end. */
  | { kind: 'charged'; failure?: UpstreamFailure };

/**
 * How the response is finished once the charge is queued: a whole answer written with its charge in its head (`held`),
 * ended with its last bytes (`end`: after the settlement, so that the ledger has the charge before the client sees the
 * end), or nothing to do (`over`: cut, ended by the relay, or the client is gone).
 */
export type Reply = { kind: 'held'; answer: HeldAnswer } | { kind: 'end'; last?: Buffer } | { kind: 'over' };

/** The head the client is answered with: the upstream's status, and its headers fit to pass on. */
export interface AnswerHead {
  status: number;
  headers: OutgoingHttpHeaders;
}

/** A whole answer waiting for its charge, to show it in its head. */
export interface HeldAnswer extends AnswerHead {
  body: Buffer;
}

/** The upstream failed the answer: counted and logged by kind (`status`: it answered with an error status). */
export interface UpstreamFailure {
  kind: 'status' | 'timeout' | 'connect' | 'mid_stream';
  err?: NodeJS.ErrnoException;
}

/** Status recorded for a request whose client went away before the answer was complete (nginx's convention). */
export const CLIENT_CLOSED = 499;

/** An upstream's answer cut short: the socket closed before its end, with no error of its own. */
export function closedEarly(what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`upstream closed the ${what}`), { code: 'ECONNRESET' });
}
