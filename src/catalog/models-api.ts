/** GET /v1/models and /v1/models/:id (behind key auth): the OpenAI list shape plus our limits, capabilities, pricing. */
import { Router, type Request, type Response } from 'express';
import { apiError, sendError, STORE_UNAVAILABLE } from '../http/errors';
import type { Logger } from '../observability/logger';
import type { EndpointName } from './endpoints';
import { SAMPLING_PARAMETERS, type Catalog, type Model } from './models';
import type { AccountStore } from '../store/ports/account-store';
import type { KeyLookup } from '../store/ports/key-lookup';

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  context_length: number;
  max_output_tokens: number;
  capabilities: { tools: boolean; json_mode: boolean; vision: boolean; developer_role: boolean | 'system'; sampling_parameters: string[] };
  /** The endpoints it serves (`chat`, `completions`, `embeddings`, `responses`). */
  endpoints: EndpointName[];
  /** `output` is absent for a model that serves embeddings alone. */
  pricing: { input: number; output?: number; currency: string; unit: 'per_million_tokens' } | null;
}

function pricingObject(p: NonNullable<Model['pricing']>): NonNullable<ModelObject['pricing']> {
  const { output, ...rest } = p;
  return output === undefined ? { ...rest, unit: 'per_million_tokens' } : { ...rest, output, unit: 'per_million_tokens' };
}

export function modelObject(m: Model): ModelObject {
  const c = m.capabilities;
  return {
    id: m.id,
    object: 'model',
    created: m.created,
    owned_by: m.ownedBy,
    context_length: m.contextLength,
    max_output_tokens: m.maxOutputTokens,
    capabilities: {
      tools: c.tools,
      json_mode: c.jsonMode,
      vision: c.vision,
      developer_role: c.developerRole === 'system' ? 'system' : c.developerRole === 'native',
      sampling_parameters: c.sampling ? [...c.sampling] : [...SAMPLING_PARAMETERS],
    },
    endpoints: [...m.endpoints],
    pricing: m.pricing ? pricingObject(m.pricing) : null,
  };
}

/** Routes mounted at /v1/models after bearer auth (which sets res.locals.keyId). */
export interface ModelsApiOptions {
  catalog: () => Catalog;
  store: KeyLookup;
  /** Where a keyless request's account is checked; absent beside a host's serving store, whose login vouches for it. */
  accounts?: Pick<AccountStore, 'getAccount'>;
  logger: Logger;
}

export function modelsApi(options: ModelsApiOptions): Router {
  const router = Router();

  /** The models this key (or, keyless, this account) may see, or undefined when an answer was already sent. */
  async function visibleModels(res: Response): Promise<readonly Model[] | undefined> {
    const keyId = res.locals.keyId as string | null;
    try {
      if (keyId === null) return await accountModels(res.locals.accountId as string, res);
      return await keyModels(keyId, res);
    } catch (err) {
      options.logger.error({ err: (err as Error).message }, 'store unreachable while listing models');
      sendError(res, STORE_UNAVAILABLE);
      return undefined;
    }
  }

  async function keyModels(keyId: string, res: Response): Promise<readonly Model[] | undefined> {
    const key = await options.store.getKey(keyId);
    const expired = key?.expiresAt != null && key.expiresAt <= Math.floor(Date.now() / 1000);
    if (!key || key.revokedAt !== null || expired) {
      sendError(res, apiError('invalid_api_key', `This API key is ${!key ? 'unknown' : key.revokedAt !== null ? 'revoked' : 'expired'}.`));
      return undefined;
    }
    const all = options.catalog().list();
    return key.models === null ? all : all.filter((m) => key.models!.includes(m.id));
  }

  /** A request the host authenticated without a key: every model, for an account that may spend. */
  async function accountModels(accountId: string, res: Response): Promise<readonly Model[] | undefined> {
    if (!options.accounts) return options.catalog().list();
    const account = await options.accounts.getAccount(accountId);
    if (!account || account.status !== 'active') {
      sendError(res, apiError('invalid_api_key', `This account is ${account ? 'disabled' : 'unknown'}.`));
      return undefined;
    }
    return options.catalog().list();
  }

  router.get('/', async (_req: Request, res: Response) => {
    const models = await visibleModels(res);
    if (models) res.json({ object: 'list', data: models.map(modelObject) });
  });

  // Model ids contain a slash: the rest of the path is the id.
  router.get('/*id', async (req: Request, res: Response) => {
    const id = (req.params.id as unknown as string[]).join('/');
    const models = await visibleModels(res);
    if (!models) return;
    const model = options.catalog().get(id);
    if (!model || !models.includes(model)) {
      return sendError(res, apiError('model_not_found', `The model '${id}' does not exist or is not available to this key.`, 'model'));
    }
    res.json(modelObject(model));
  });

  return router;
}
