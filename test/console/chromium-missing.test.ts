/** A machine prepared without Chromium: the browser suites say what is missing and how to install it, in one line. */
import { launchBrowser } from '../helpers/browser';

describe('the console browser tests on a machine without Chromium', () => {
  it("fail with one line naming the missing path and the apt command, not playwright's long launch error", async () => {
    const failure = await launchBrowser('/nonexistent/chromium').then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).toBe(
      "Chromium not found at /nonexistent/chromium; the console's browser tests need it: apt-get install -y chromium (or set CHROMIUM_PATH to a Chromium)",
    );
    // Jest prints the stack under the message: it is that same line, nothing more.
    expect(failure?.stack).toBe(failure?.message);
  });
});
