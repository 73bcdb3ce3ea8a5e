/**
 * GET /v1/models and /v1/models/:id (behind key auth and liveCredential): the OpenAI list shape plus our limits,
 * capabilities, pricing; a key limited to some models sees those.
 */
import { Router, type Response } from 'express';
import { modelListObject, modelObject } from '../../api/model';
import type { Catalog, Model } from '../../catalog/models';
import { apiError, sendError } from '../../http/errors';
import { liveKey } from '../../http/request-context';

export interface ModelsApiOptions {
  catalog: () => Catalog;
}

export function modelsApi(options: ModelsApiOptions): Router {
  const router = Router();

  /** The models this key may use (every model for a keyless request, whose account liveCredential checked). */
  function visibleModels(res: Response): readonly Model[] {
    const key = liveKey(res);
    const all = options.catalog().list();
    return key === null || key.models === null ? all : all.filter((m) => key.models!.includes(m.id));
  }

  router.get('/', (_req, res) => {
    res.json(modelListObject(visibleModels(res)));
  });

  // Model ids contain a slash: the rest of the path is the id.
  router.get('/*id', (req, res) => {
    const id = (req.params.id as unknown as string[]).join('/');
    const model = options.catalog().get(id);
    if (!model || !visibleModels(res).includes(model)) {
      return sendError(res, apiError('model_not_found', `The model '${id}' does not exist or is not available to this key.`, 'model'));
    }
    res.json(modelObject(model));
  });

  return router;
}
