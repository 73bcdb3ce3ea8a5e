/** GET /v1/models and /v1/models/:id (behind key auth): the OpenAI list shape plus our limits, capabilities, pricing. */
import { Router, type Response } from 'express';
import { modelListObject, modelObject } from '../api/model';
import type { Catalog, Model } from '../catalog/models';
import { apiError, sendError } from '../http/errors';
import type { StoreGuard } from '../http/store-guard';
import type { AccountStore } from '../store/ports/account-store';
import type { KeyLookup } from '../store/ports/key-lookup';

/** Routes mounted at /v1/models after bearer auth (which sets res.locals.keyId). */
export interface ModelsApiOptions {
  catalog: () => Catalog;
  store: KeyLookup;
  /** Where a keyless request's account is checked; absent beside a host's serving store, whose login vouches for it. */
  accounts?: Pick<AccountStore, 'getAccount'>;
  guard: StoreGuard;
}

export function modelsApi(options: ModelsApiOptions): Router {
  const router = Router();
  const { guard } = options;

  /** The models this key (or, keyless, this account) may see, or undefined when an answer was already sent. */
  async function visibleModels(res: Response): Promise<readonly Model[] | undefined> {
    const keyId = res.locals.keyId as string | null;
    if (keyId === null) return accountModels(res.locals.accountId as string, res);
    return keyModels(keyId, res);
  }

  /** A key's models: refused (401, as completions refuse it) when the key, or its account, may not spend. */
  async function keyModels(keyId: string, res: Response): Promise<readonly Model[] | undefined> {
    const accountId = res.locals.accountId as string;
    const [key, account] = await Promise.all([options.store.getKey(keyId), options.accounts?.getAccount(accountId)]);
    const expired = key?.expiresAt != null && key.expiresAt <= Math.floor(Date.now() / 1000);
    if (!key || key.revokedAt !== null || expired) {
      sendError(res, apiError('invalid_api_key', `This API key is ${!key ? 'unknown' : key.revokedAt !== null ? 'revoked' : 'expired'}.`));
      return undefined;
    }
    // Without the account port (beside a host's serving store) the reserve step alone refuses a disabled account.
    if (options.accounts && account?.status !== 'active') {
      sendError(res, apiError('invalid_api_key', `This API key's account is ${account ? 'disabled' : 'unknown'}.`));
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

  router.get(
    '/',
    guard(async (_req, res) => {
      const models = await visibleModels(res);
      if (models) res.json(modelListObject(models));
    }),
  );

  // Model ids contain a slash: the rest of the path is the id.
  router.get(
    '/*id',
    guard(async (req, res) => {
      const id = (req.params.id as unknown as string[]).join('/');
      const models = await visibleModels(res);
      if (!models) return;
      const model = options.catalog().get(id);
      if (!model || !models.includes(model)) {
        return sendError(res, apiError('model_not_found', `The model '${id}' does not exist or is not available to this key.`, 'model'));
      }
      res.json(modelObject(model));
    }),
  );

  return router;
}
