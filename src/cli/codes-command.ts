/** `tokenmeter codes`: redemption codes, shown once when made. */
import type { Command } from 'commander';
import { count, table, time } from './cli-format';
import { clientFor, expiry, expiryOptions, positiveInt, print, type Common } from './cli-options';

export function codesCommand(program: Command): void {
  const codes = program.command('codes').description('redemption codes for token packages');

  expiryOptions(codes.command('create'), 'code')
    .description('make codes for a product or a token amount; the codes are shown only now')
    .option('--product <id>', 'the product the codes buy')
    .option('--tokens <n>', 'or: tokens each code credits', positiveInt)
    .option('--valid-days <n>', 'with --tokens: days the credited package stays usable', positiveInt)
    .option('--count <n>', 'how many codes (1-1000)', positiveInt, 1)
    .action(
      async (
        opts: Common & { product?: string; tokens?: number; validDays?: number; count: number; expiresAt?: number; expiresIn?: number },
      ) => {
        const { data } = await clientFor(opts).createCodes({
          product_id: opts.product,
          tokens: opts.tokens,
          valid_days: opts.validDays,
          count: opts.count,
          expires_at: expiry(opts),
        });
        print(opts, data, () =>
          [
            `Made ${data.length} code${data.length === 1 ? '' : 's'} for ${data[0].product_id ?? `${count(data[0].tokens)} tokens`}` +
              ` (expire: ${time(data[0].expires_at)}). Shown only now; store them safely:`,
            '',
            ...data.map((c) => `  ${c.code}`),
          ].join('\n'),
        );
      },
    );

  codes
    .command('list')
    .description('list codes: status and who redeemed them (never the codes)')
    .action(async (opts: Common) => {
      const { data } = await clientFor(opts).listCodes();
      print(opts, data, () =>
        data.length === 0
          ? 'No codes yet: make some with `tokenmeter codes create --product <id> --count 10`.'
          : table(
              ['ID', 'PRODUCT', 'TOKENS', 'STATUS', 'EXPIRES', 'REDEEMED BY', 'REDEEMED'],
              data.map((c) => [
                c.id,
                c.product_id ?? '-',
                count(c.tokens),
                c.status,
                time(c.expires_at),
                c.redeemed_by ?? '-',
                time(c.redeemed_at),
              ]),
            ),
      );
    });
}
