/** Checks the model list a key is limited to (`models`) against the catalog, for every route that makes a key. */
import { apiError, type ApiError } from '../http/errors';
import type { Catalog } from './models';

/** The first model id the catalog does not serve, as the 400 naming it; undefined when all are served. */
export function unservedModel(catalog: Catalog, models: readonly string[] | null | undefined): ApiError | undefined {
  const i = models?.findIndex((m) => catalog.get(m) === undefined) ?? -1;
  if (i === -1) return undefined;
  const param = `models[${i}]`;
  return apiError('invalid_request_error', `Invalid '${param}': '${models![i]}' is not a served model.`, param);
}
