/** `tokenmeter upstreams`: each pool's servers, their health, in-flight requests and last error. */
import type { Command } from 'commander';
import type { UpstreamPoolObject } from '../api/upstream';
import { table } from './cli-format';
import { clientFor, print, type Common } from './cli-options';

/** One row per server, its pool and models first. */
function rows(pools: UpstreamPoolObject[]): (string | number)[][] {
  return pools.flatMap((p) =>
    p.servers.map((s) => [
      p.name,
      p.models.join(','),
      s.url,
      s.weight,
      s.in_flight,
      s.max_concurrent ?? '-',
      s.ejected_until ? `ejected until ${s.ejected_until}` : s.healthy ? 'healthy' : 'unhealthy',
      s.last_error ? `${s.last_error.message} (${s.last_error.at})` : '-',
    ]),
  );
}

export function upstreamsCommand(program: Command): void {
  program
    .command('upstreams')
    .description("the upstream pools: each server's health, in-flight requests and last error")
    .action(async (opts: Common) => {
      const { data } = await clientFor(opts).upstreams();
      print(opts, data, () =>
        data.length === 0
          ? 'No upstreams.'
          : table(['POOL', 'MODELS', 'SERVER', 'WEIGHT', 'IN FLIGHT', 'MAX', 'STATE', 'LAST ERROR'], rows(data)),
      );
    });
}
