/** What an account holds (and a key, through its account): the fields the detailed views of both share. */
import { z } from 'zod';
import type { LevelUse } from '../limits/limits';
import type { TokenPackage, UsageTotals } from '../store/records/common';
import { tokenCount } from './fields';
import { limitUseObject, limitUseSchema } from './limits';
import { packageObject, packageSchema } from './package';
import { usageTotalsObject, usageTotalsSchema } from './usage';

/** Usable tokens (unexpired package remainders, less debt and open reservations), reserved tokens, debt. */
export const balanceFields = { balance: z.number().int(), reserved: tokenCount, debt: tokenCount };

/** The packages, the usage totals and what the limits hold now (null without limits). */
export const holdingsFields = {
  packages: z.array(packageSchema),
  usage: usageTotalsSchema,
  limit_use: limitUseSchema.nullable(),
};

type Holdings = { [K in keyof typeof holdingsFields]: z.infer<(typeof holdingsFields)[K]> };

export function holdingsObject(s: { packages: TokenPackage[]; usage: UsageTotals; limitUse: LevelUse | null }): Holdings {
  return {
    packages: s.packages.map(packageObject),
    usage: usageTotalsObject(s.usage),
    limit_use: s.limitUse && limitUseObject(s.limitUse),
  };
}
