/**
 * What running the Redis store's Lua for the embedded store would cost (issue 39, the moonshot): CPU per RESERVE +
 * SETTLE on today's MemoryStore, against the least a Lua VM in-process (wasmoon, Lua 5.4 on WebAssembly) spends on the
 * same request, its 41 Redis commands (bench/redis-bytes.ts counts them) each one call from Lua into a JS map and
 * nothing else. Also prints the Lua 5.1 (Redis) vs 5.4 differences the scripts would meet. Run:
 * `npx tsx bench/lua-vm-boundary.ts [N]`. The result is in docs/development.md (Lua on the embedded store).
 */
import { randomUUID } from 'node:crypto';
import { LuaFactory } from 'wasmoon';
import { MemoryStore } from '../src/store/memory/memory-store';
import { keyWithTokens } from '../test/helpers/stores';

const N = Number(process.argv[2] ?? 5_000);
const COMMANDS = 41;

async function memoryStore(): Promise<number> {
  const store = new MemoryStore();
  const key = await keyWithTokens(store, 1e12);
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const requestId = randomUUID();
      const at = { accountId: key.accountId, keyId: key.id, requestId, model: 'acme/m1' };
      await store.reserve({ ...at, fixed: 10, unit: 1, allowance: 100, leaseMs: 60_000 });
      await store.settle({
        ...at,
        promptTokens: 10,
        completionTokens: 20,
        chargedTokens: 30,
        estimated: false,
        stream: false,
        status: 200,
      });
    }
  };
  await run(2_000);
  const before = process.cpuUsage();
  await run(N);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / N;
}

async function luaVm(commands: number): Promise<{ us: number; differences: string }> {
  const lua = await new LuaFactory().createEngine();
  const hash = new Map<string, string>();
  lua.global.set('rcall', (command: string, field: string, value: string) => {
    if (command === 'HSET') return hash.set(field, value) && 1;
    if (command === 'HINCRBY') {
      const v = Number(hash.get(field) ?? 0) + Number(value);
      hash.set(field, String(v));
      return v;
    }
    return hash.get(field) ?? false;
  });
  await lua.doString(`function step(commands)
    for i = 1, commands do
      local m = i % 3
      if m == 0 then rcall('HGET', 'f' .. i, '') elseif m == 1 then rcall('HINCRBY', 'n', '1') else rcall('HSET', 'g' .. i, 'v') end
    end
  end`);
  // The requests run inside one Lua call: calling a Lua function from JS thousands of times crashed wasmoon 1.16
  // ("memory access out of bounds"), and this way only the commands are counted.
  const before = process.cpuUsage();
  await lua.doString(`for r = 1, ${N} do step(${commands}) end`);
  const used = process.cpuUsage(before);
  const differences = (await lua.doString(
    `return _VERSION .. ': 3 / 1 = ' .. tostring(3 / 1) .. ', 1000 * 1.0 .. "" = ' .. (1000 * 1.0 .. '') .. ', unpack: ' .. type(unpack) .. ', cjson: ' .. type(cjson)`,
  )) as string;
  lua.global.close();
  return { us: (used.user + used.system) / N, differences };
}

async function main(): Promise<void> {
  const memory = await memoryStore();
  const vm = await luaVm(COMMANDS);
  const entry = await luaVm(0);
  console.log(`MemoryStore: ${memory.toFixed(1)} µs CPU per RESERVE + SETTLE`);
  console.log(
    `wasmoon, ${COMMANDS} commands as calls into JS, no other work: ${vm.us.toFixed(1)} µs per request (${(vm.us / memory).toFixed(1)}×)`,
  );
  console.log(`wasmoon, the loop alone: ${entry.us.toFixed(1)} µs per request`);
  console.log(vm.differences);
}

void main();
