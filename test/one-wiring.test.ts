/** The tests run the wiring users run: no test helper builds a service that buildServices (src/build-services.ts) builds. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const HELPERS = join(__dirname, 'helpers');
/** What only the composition root constructs. */
const WIRING = /new (Meter|Pools|TokenCounter|Metrics|Journal|DeliveryWorker)\(|instrumentStore\(|openLedgerArchive\(/;

test('no test helper constructs a service of its own; startProxy calls buildServices', () => {
  const wiring = readdirSync(HELPERS)
    .filter((name) => name.endsWith('.ts'))
    .filter((name) => WIRING.test(readFileSync(join(HELPERS, name), 'utf8')));
  expect(wiring).toEqual([]);
  expect(readFileSync(join(HELPERS, 'proxy.ts'), 'utf8')).toMatch(/await buildServices\(/);
});
