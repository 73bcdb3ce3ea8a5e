/** The byte-level model rewrite: only the top-level `model` value changes, every other byte stays. */
import { modelValue } from '../../src/catalog/models';
import { findModelValue, rewriteModel, TopLevelScan } from '../../src/proxy/model-rewriter';

const rw = (json: string, id = 'c/m') => rewriteModel(Buffer.from(json), modelValue(id)).toString();

describe('rewriteModel', () => {
  it('replaces whatever name the upstream gave', () => {
    expect(rw('{"id":"x","model":"gpt-4o-2024-08-06","n":1}', 'gpt-4o')).toBe('{"id":"x","model":"gpt-4o","n":1}');
    expect(rw('{"model":"llama3:latest"}', 'llama3')).toBe('{"model":"llama3"}');
  });

  it('keeps pretty-printed whitespace around the colon and elsewhere', () => {
    const pretty = '{\n  "model" :\t"up",\n  "choices": [ ]\n}\n';
    expect(rw(pretty)).toBe('{\n  "model" :\t"c/m",\n  "choices": [ ]\n}\n');
  });

  it('never touches a nested "model" key or a "model" inside a string', () => {
    const json = '{"messages":[{"model":"inner"}],"x":"\\"model\\":\\"up\\"","tool":{"args":{"model":"t"}},"model":"up","y":{"model":"z"}}';
    expect(rw(json)).toBe(
      '{"messages":[{"model":"inner"}],"x":"\\"model\\":\\"up\\"","tool":{"args":{"model":"t"}},"model":"c/m","y":{"model":"z"}}',
    );
  });

  it('handles escaped quotes and backslashes in strings before the model', () => {
    expect(rw('{"a":"\\\\","b":"q\\"}","model":"up"}')).toBe('{"a":"\\\\","b":"q\\"}","model":"c/m"}');
  });

  it('returns the same Buffer when there is no top-level model or it already reads the id', () => {
    for (const json of ['{"id":1}', '{"model":"c/m"}', '{"model":null}', '{"a":{"model":"x"}}', '"model"']) {
      const buf = Buffer.from(json);
      expect(rewriteModel(buf, modelValue('c/m'))).toBe(buf);
    }
  });

  it('encodes an id that needs escaping as a valid JSON string', () => {
    expect(JSON.parse(rw('{"model":"up"}', 'we"ird\\id')).model).toBe('we"ird\\id');
  });
});

describe('findModelValue', () => {
  it('gives -1 for a value that is not a string and for a key that is a value', () => {
    expect(findModelValue(Buffer.from('{"model":7}'), 0, 11)).toBe(-1);
    expect(findModelValue(Buffer.from('{"x":"model","y":1}'), 0, 19)).toBe(-1);
  });
});

describe('TopLevelScan', () => {
  const scanned = (json: string) => {
    const scan = new TopLevelScan();
    scan.scan(Buffer.from(json), 0, Buffer.byteLength(json), true);
    return { model: scan.modelOpen === -1 ? null : json.slice(scan.modelOpen, scan.modelClose), usage: scan.usage };
  };

  it('finds a top-level usage object after the model, in the same pass', () => {
    expect(scanned('{"model":"up","choices":[],"usage":{"prompt_tokens":1}}')).toEqual({ model: '"up"', usage: true });
    expect(scanned('{"usage" : {},"model":"up"}')).toEqual({ model: '"up"', usage: true });
  });

  it("takes no usage that is null, nested or inside a string for the chunk's own", () => {
    expect(scanned('{"model":"up","usage":null}').usage).toBe(false);
    expect(scanned('{"model":"up","choices":[{"usage":{"x":1}}]}').usage).toBe(false);
    expect(scanned('{"model":"up","c":"\\"usage\\":{}"}').usage).toBe(false);
  });

  it('keeps the first top-level model key, even when a later one has a string value', () => {
    expect(scanned('{"model":null,"model":"later"}').model).toBeNull();
    expect(scanned('{"model":"first","model":"later"}').model).toBe('"first"');
  });
});
