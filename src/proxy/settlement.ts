/** The ledger's settlement of one exchange: who, which model and endpoint, the usage charged, and the tool line. */
import type { ChargedUsage } from '../http/request-context';
import type { Settlement } from '../store/records/metering';
import type { ExchangeContext } from './exchange-context';

/** What SETTLE records for this exchange's charge (`tools`: the hosted tool line, left out when it has no calls). */
export function settlementOf(
  ctx: ExchangeContext,
  usage: ChargedUsage,
  tools: { calls: number; tokens: number },
  status: number,
): Settlement {
  const { promptTokens, completionTokens, cachedTokens, reasoningTokens, chargedTokens, estimated } = usage;
  return {
    accountId: ctx.accountId,
    keyId: ctx.keyId,
    requestId: ctx.requestId,
    model: ctx.model.id,
    endpoint: ctx.endpoint,
    promptTokens,
    completionTokens,
    cachedTokens,
    reasoningTokens,
    ...(tools.calls > 0 ? { toolCalls: tools.calls, toolTokens: tools.tokens } : {}),
    chargedTokens,
    estimated,
    stream: ctx.stream,
    status,
  };
}
