/** Writes the reservation's output allowance into an upstream body: no output cap field escapes the reservation. */
import { OUTPUT_CAP_FIELDS } from '../../catalog/output-caps';

/**
 * `body` (our copy of the client's) with the allowance in each of `fields`, and the client's value removed from every
 * other field some server reads as a cap (a client's `max_tokens` beside `max_completion_tokens`, llama.cpp's
 * `n_predict`): an upstream that reads one we did not write would otherwise generate past what was reserved.
 */
export function capOutput(body: Record<string, unknown>, fields: readonly string[], allowance: number): Record<string, unknown> {
  for (const field of OUTPUT_CAP_FIELDS) {
    if (body[field] !== undefined && !fields.includes(field)) delete body[field];
  }
  for (const field of fields) body[field] = allowance;
  return body;
}
