/** `tokenmeter products`: the product center's token packages for sale. */
import { InvalidArgumentError, type Command } from 'commander';
import type { ProductObject } from '../api';
import { count, table } from './cli-format';
import { clientFor, positiveInt, print, type Common } from './cli-options';

function price(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number in the currency’s smallest unit (cents).');
  return n;
}

function productTable(products: ProductObject[]): string {
  return table(
    ['ID', 'NAME', 'TOKENS', 'VALID DAYS', 'PRICE', 'ACTIVE'],
    products.map((p) => [
      p.id,
      p.name,
      count(p.tokens),
      p.valid_days === null ? '-' : String(p.valid_days),
      `${(p.price / 100).toFixed(2)} ${p.currency.toUpperCase()}`,
      p.active ? 'yes' : 'no',
    ]),
  );
}

interface ProductOptions extends Common {
  name?: string;
  tokens?: number;
  validDays?: number;
  price?: number;
  currency?: string;
  active?: boolean;
}

export function productsCommand(program: Command): void {
  const products = program.command('products').description('the product center: token packages for sale');

  products
    .command('create')
    .description('create a product')
    .option('--id <id>', 'its id (1-64 of a-z 0-9 _ -); generated when omitted')
    .requiredOption('--name <name>', 'what buyers see')
    .requiredOption('--tokens <n>', 'tokens in the package', positiveInt)
    .option('--valid-days <n>', 'days a bought package stays usable (default: no expiry)', positiveInt)
    .requiredOption('--price <cents>', 'in the currency’s smallest unit', price)
    .option('--currency <code>', 'ISO 4217', 'usd')
    .option('--inactive', 'create it hidden from buyers')
    .action(async (opts: ProductOptions & { id?: string; inactive?: boolean }) => {
      const p = await clientFor(opts).createProduct({
        id: opts.id,
        name: opts.name!,
        tokens: opts.tokens!,
        valid_days: opts.validDays,
        price: opts.price!,
        currency: opts.currency,
        active: !opts.inactive,
      });
      print(opts, p, () => `Created product ${p.id}.\n\n${productTable([p])}`);
    });

  products
    .command('list')
    .description('list products, active or not')
    .action(async (opts: Common) => {
      const { data } = await clientFor(opts).listProducts();
      print(opts, data, () => (data.length === 0 ? 'No products yet: create one with `tokenmeter products create`.' : productTable(data)));
    });

  products
    .command('update')
    .description('change a product (packages already bought keep what they were sold with)')
    .argument('<id>', 'the product id')
    .option('--name <name>', 'what buyers see')
    .option('--tokens <n>', 'tokens in the package', positiveInt)
    .option('--valid-days <n>', 'days a bought package stays usable', positiveInt)
    .option('--price <cents>', 'in the currency’s smallest unit', price)
    .option('--currency <code>', 'ISO 4217')
    .option('--active', 'offer it to buyers')
    .option('--inactive', 'hide it from buyers')
    .action(async (id: string, opts: ProductOptions & { inactive?: boolean }) => {
      const p = await clientFor(opts).updateProduct(id, {
        name: opts.name,
        tokens: opts.tokens,
        valid_days: opts.validDays,
        price: opts.price,
        currency: opts.currency,
        active: opts.inactive ? false : opts.active ? true : undefined,
      });
      print(opts, p, () => `Updated product ${p.id}.\n\n${productTable([p])}`);
    });
}
