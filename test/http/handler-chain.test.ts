/**
 * A chain runs its handlers as Express runs a route's: in turn, each on its predecessor's `next()`, and an error from
 * any of them (passed on, thrown, or a rejected promise) ends the chain at its own `next`, once.
 */
import type { NextFunction, RequestHandler } from 'express';
import { handlerChain, type RoutedHandler, type RoutedRequest, type RoutedResponse } from '../../src/http/handler-chain';

/** Runs a chain on a bare request and response; resolves with what reached the chain's own `next`. */
function run(handlers: RoutedHandler[]): Promise<{ reached: boolean; err: unknown }> {
  return new Promise((resolve) => {
    const done: NextFunction = (err?: unknown) => resolve({ reached: true, err });
    handlerChain(handlers)({} as RoutedRequest, {} as RoutedResponse, done);
    // A chain that stopped without calling done: give its handlers a turn to prove they did not.
    setImmediate(() => resolve({ reached: false, err: undefined }));
  });
}

describe('handlerChain', () => {
  it('runs each handler on the one before calling next, then reaches its own next', async () => {
    const order: string[] = [];
    const step =
      (name: string): RoutedHandler =>
      (_req, _res, next) => {
        order.push(name);
        next();
      };
    const outcome = await run([step('a'), step('b'), step('c')]);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(outcome).toEqual({ reached: true, err: undefined });
  });

  it('stops at a handler that answers without calling next', async () => {
    const order: string[] = [];
    const outcome = await run([
      (_req, _res, next) => {
        order.push('a');
        next();
      },
      () => void order.push('answer'),
      () => void order.push('never'),
    ]);
    expect(order).toEqual(['a', 'answer']);
    expect(outcome.reached).toBe(false);
  });

  it('passes an error given to next on to its own next, skipping the handlers after it', async () => {
    const err = new Error('refused');
    const later = jest.fn();
    const outcome = await run([(_req, _res, next) => next(err), later]);
    expect(outcome).toEqual({ reached: true, err });
    expect(later).not.toHaveBeenCalled();
  });

  it('passes a thrown error on', async () => {
    const err = new Error('thrown');
    const outcome = await run([
      () => {
        throw err;
      },
    ]);
    expect(outcome).toEqual({ reached: true, err });
  });

  it("passes a returned promise's rejection on, as Express 5 does for async handlers", async () => {
    const err = new Error('rejected');
    const outcome = await run([(_req, _res, next) => next(), () => Promise.reject(err)]);
    expect(outcome).toEqual({ reached: true, err });
  });

  it("treats next('route') as the end of the chain, without an error", async () => {
    const later = jest.fn();
    const outcome = await run([(_req, _res, next) => next('route'), later]);
    expect(outcome).toEqual({ reached: true, err: undefined });
    expect(later).not.toHaveBeenCalled();
  });

  it("does not compile with a handler that needs Express's request: the direct path hands node's", () => {
    const needsExpress: RequestHandler = (req, res) => res.status(200).send(req.get('host'));
    // @ts-expect-error: an Express handler is not a RoutedHandler (typecheck fails here if it ever becomes one)
    const chain = handlerChain([needsExpress]);
    expect(typeof chain).toBe('function');
  });
});
