/**
 * The caller's leaving as the pool hears it: the listener set last is called once, a listener taken off is not, and
 * taking off an earlier try's listener leaves the next try's in place (a retry must still be cut when the client leaves).
 */
import { Cancellation } from '../../src/upstreams/cancellation';

describe('a cancellation', () => {
  it('calls the listener set last, once, and says it was cancelled', () => {
    const c = new Cancellation();
    const first = jest.fn();
    const second = jest.fn();
    c.onCancel(first);
    c.onCancel(second);
    expect(c.cancelled).toBe(false);
    c.cancel();
    c.cancel();
    expect(c.cancelled).toBe(true);
    expect(first).not.toHaveBeenCalled();
    expect(second).toHaveBeenCalledTimes(1);
  });

  it('does not call a listener taken off', () => {
    const c = new Cancellation();
    const fn = jest.fn();
    c.onCancel(fn)();
    c.cancel();
    expect(fn).not.toHaveBeenCalled();
  });

  it("keeps the next try's listener when an earlier try's is taken off after it", () => {
    const c = new Cancellation();
    const earlier = c.onCancel(jest.fn());
    const next = jest.fn();
    c.onCancel(next);
    earlier();
    c.cancel();
    expect(next).toHaveBeenCalledTimes(1);
  });
});
