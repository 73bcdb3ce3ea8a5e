/** The model-name rewrite: the upstream's name for a model becomes the client's, in JSON answers and stream chunks. */

/**
 * Returns a function that rewrites the first `"model":"<from>"` in a JSON text to `<to>`: a substring splice for the
 * compact JSON that servers emit, with a pattern for spaced JSON (`"model": "x"`) only when the compact form is absent.
 */
export function modelRewriter(from: string, to: string): (json: string) => string {
  const compact = `"model":${JSON.stringify(from)}`;
  const replacement = `"model":${JSON.stringify(to)}`;
  const spaced = new RegExp(`"model"\\s*:\\s*${escapeRegExp(JSON.stringify(from))}`);
  return (json) => {
    const at = json.indexOf(compact);
    if (at !== -1) return json.slice(0, at) + replacement + json.slice(at + compact.length);
    const m = spaced.exec(json);
    return m ? json.slice(0, m.index) + replacement + json.slice(m.index + m[0].length) : json;
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
