/**
 * A count the worker could not make is made on the main thread in slices: the same tokens as a count made whole (never
 * the text's bytes), with the event loop served between slices, so a long answer holds no other request.
 */
import { countText } from '../../src/metering/estimate';
import { countOutput } from '../../src/metering/output-count';
import { countInSlices } from '../../src/metering/sliced-count';

const prose = 'The quick brown fox jumps over the lazy dog, again and again; 42 times. Ωμέγα 日本語の文 🙂\n'.repeat(2_000);
const run = 'a'.repeat(20_000);

describe('counting in slices', () => {
  it('counts each text as countText counts it whole', async () => {
    expect(await countInSlices([prose, run, '', 'short'])).toEqual([countText(prose), countText(run), 0, countText('short')]);
  });

  it('lets the event loop turn while it counts a long text', async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      await countInSlices([prose.repeat(4)]);
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it('stands in for a count the worker failed: the answer is charged its tokens, not its UTF-8 bytes', async () => {
    for (const failure of ['failed', 'busy', 'over_budget'] as const) {
      const charged = await countOutput(() => Promise.resolve(failure), [prose, run]);
      expect(charged).toBe(countText(prose) + countText(run));
      expect(charged).toBeLessThan(Buffer.byteLength(prose) + run.length);
    }
  });
});
