/** Writes a models file for a test's proxy process. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { MODEL, UPSTREAM_MODEL } from './proxy';

export function writeModelsFile(
  models: Record<string, unknown>[] = [{ id: MODEL, upstream_model: UPSTREAM_MODEL, context_length: 8192, max_output_tokens: 1024 }],
): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tm-models-')), 'models.yaml');
  writeFileSync(file, stringify({ models }));
  return file;
}
