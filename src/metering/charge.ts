/** What a request is charged, and what its prompt reserves, under a model's weights. */
import type { Model } from '../catalog/models';

/**
 * The weighted-token (pricing) formula, the one place it lives: a prompt's `cachedTokens` (served from the upstream's
 * cache) at the cached-input weight, its `cacheWriteTokens` (written to it) at the cache-write weight, the rest at the
 * input weight, and the completion at the output weight; rounded up. Reservations are built from it (reservedPrompt).
 */
export function charge(
  model: Pick<Model, 'inputWeight' | 'outputWeight'> & Partial<Pick<Model, 'cachedInputWeight' | 'cacheWriteWeight'>>,
  promptTokens: number,
  completionTokens: number,
  cachedTokens = 0,
  cacheWriteTokens = 0,
): number {
  const cached = Math.min(cachedTokens, promptTokens);
  const written = Math.min(cacheWriteTokens, promptTokens - cached);
  const cachedWeight = model.cachedInputWeight ?? model.inputWeight;
  const writeWeight = model.cacheWriteWeight ?? model.inputWeight;
  return Math.ceil(
    (promptTokens - cached - written) * model.inputWeight +
      cached * cachedWeight +
      written * writeWeight +
      completionTokens * model.outputWeight,
  );
}

/** A prompt's reservation: at the input weight, or the cache-write weight where that is dearer (any token may be written). */
export function reservedPrompt(model: Model, promptTokens: number): number {
  return model.cacheWriteWeight > model.inputWeight ? charge(model, promptTokens, 0, 0, promptTokens) : charge(model, promptTokens, 0);
}
