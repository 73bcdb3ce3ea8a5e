#!/usr/bin/env node
/** The `tokenmeter` command: manage accounts, keys, packages and usage through a running proxy's admin API. */
import { Command } from 'commander';
import { accountsCommand } from './accounts-command';
import { AdminClientError } from './admin-client';
import { clientFor, globalOptions, print, type Common } from './cli-options';
import { codesCommand } from './codes-command';
import { keysCommand } from './keys-command';
import { ledgerCommand } from './ledger-command';
import { productsCommand } from './products-command';
import { upstreamsCommand } from './upstreams-command';
import { usageCommand } from './usage-command';
import { webhooksCommand } from './webhooks-command';

export function buildCli(): Command {
  const program = new Command('tokenmeter')
    .description(
      'Manage tokenmeter accounts, keys, token packages, usage, products, redemption codes and webhooks, and see the upstream pools, through the admin API.\n\n' +
        "The proxy's address comes from --url or TOKENMETER_URL (default http://127.0.0.1:8080, without /v1); the admin " +
        "token from TOKENMETER_ADMIN_TOKEN (the proxy's ADMIN_TOKEN) or --admin-token. The global options go before or " +
        'after the subcommand.',
    )
    .showHelpAfterError();
  globalOptions(program);

  // One file per command group.
  accountsCommand(program);
  keysCommand(program);
  usageCommand(program);
  productsCommand(program);
  codesCommand(program);
  webhooksCommand(program);
  upstreamsCommand(program);
  ledgerCommand(program);

  const models = program.command('models').description('the models file');
  models
    .command('reload')
    .description('reload the models file on the proxy (a bad file is refused and the old catalog stays)')
    .action(async (opts: Common) => {
      const r = await clientFor(opts).reloadModels();
      print(opts, r, () => `Reloaded: ${r.models} models.`);
    });

  return program;
}

if (require.main === module) {
  buildCli()
    .parseAsync(process.argv)
    .catch((err: Error) => {
      process.stderr.write(`tokenmeter: ${err instanceof AdminClientError ? err.message : `unexpected error: ${err.message}`}\n`);
      process.exit(1);
    });
}
