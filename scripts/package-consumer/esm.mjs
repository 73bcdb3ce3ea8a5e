// An ES module consumer: the package's named exports resolve through `import`, and a tokenmeter opens and closes.
import { createTokenmeter, MemoryStore, ConfigError } from 'tokenmeter';

const meter = await createTokenmeter({
  store: new MemoryStore(),
  models: [{ id: 'a/b', context_length: 10, max_output_tokens: 5 }],
  logLevel: 'silent',
});
if (typeof meter.openai !== 'function' || typeof ConfigError !== 'function')
  throw new Error('esm: the exports are not what they should be');
await meter.close();
console.log('esm: import works');
