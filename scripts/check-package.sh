#!/usr/bin/env bash
# The package as users get it: packs the project, checks the tarball holds only what runs, installs it into a scratch
# app in a temporary directory, type-checks a TypeScript consumer against the published types, and serves one metered
# request through it (plus an ES module import). Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

version() { node -p "require('$root/node_modules/$1/package.json').version"; }

echo "check-package: packing"
tarball="$scratch/$(npm pack --silent --pack-destination "$scratch" | tail -1)"

# Only compiled code, its types, the Redis store's Lua files and the built console: no sources, tests, source maps or stack files.
listing=$(tar -tzf "$tarball")
unexpected=$(echo "$listing" | grep -vE '^package/(package\.json|README\.md|LICENSE|dist/.*\.(js|d\.ts|lua)|dist/web/.*)$' || true)
if [ -n "$unexpected" ]; then
  echo "check-package: the tarball holds files that do not run:"
  echo "$unexpected"
  exit 1
fi
for needed in dist/index.js dist/index.d.ts dist/server.js dist/cli/cli.js dist/web/index.html dist/store/redis/lua/metering/settle.lua; do
  echo "$listing" | grep -qx "package/$needed" || { echo "check-package: the tarball lacks $needed"; exit 1; }
done

echo "check-package: installing into a scratch app"
app="$scratch/app"
mkdir "$app"
cp scripts/package-consumer/consumer.ts scripts/package-consumer/esm.mjs scripts/package-consumer/tsconfig.json "$app/"
cd "$app"
echo '{ "name": "scratch-consumer", "private": true, "type": "commonjs" }' >package.json
# The consumer's own tools at the versions this project uses (from the npm cache when it has them).
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$tarball" \
  "typescript@$(version typescript)" "@types/express@$(version @types/express)" "@types/node@$(version @types/node)"

echo "check-package: type-checking the consumer against the published types"
npx --no-install tsc -p tsconfig.json

echo "check-package: serving a metered request through the installed package"
node build/consumer.js
node esm.mjs

# The app docs/library.md shows, as written there (its block marked `recipe: file my-app/server.mjs`), against the
# stand-in upstream: the stand-in's port (8000) moved to the one it bound, and the app's (3000) to port 0, the port it
# bound then printed as the stand-in prints its own (never a port picked before its server binds it).
echo "check-package: running docs/library.md's app"
# Found as the recipe runner finds it (test/helpers/recipes.ts's recipeBlocks).
(cd "$root" && node --import tsx -e '
  const { recipeBlocks } = require("./test/helpers/recipes.ts");
  const page = require("node:fs").readFileSync("docs/library.md", "utf8");
  const app = recipeBlocks(page).find((b) => b.kind === "file" && b.path === "my-app/server.mjs");
  if (app) process.stdout.write(app.body);
') >docs-app.mjs
grep -q createTokenmeter docs-app.mjs || { echo "check-package: docs/library.md has no my-app/server.mjs block"; exit 1; }
(cd "$root" && MOCK_PORT=0 MOCK_MAX_WORDS=12 exec node --import tsx bench/mock-upstream.ts) >stand-in.out &
stand_in=$!
app_pid=
trap 'kill $stand_in ${app_pid:-} 2>/dev/null; rm -rf "$scratch"' EXIT
for _ in $(seq 100); do grep -q '"ready"' stand-in.out && break; sleep 0.1; done
mock_port=$(grep -o '"port":[0-9]*' stand-in.out | cut -d: -f2)
listening='const server = app.listen(0, () => console.log(JSON.stringify({ ready: true, port: server.address().port })));'
sed -e "s|localhost:8000|127.0.0.1:$mock_port|" -e "s|^app.listen(3000);|$listening|" docs-app.mjs >server.mjs
grep -q 'listen(0,' server.mjs || { echo "check-package: docs/library.md's app has no app.listen(3000) line"; exit 1; }
node server.mjs >app.out &
app_pid=$!
for _ in $(seq 100); do grep -q '"ready"' app.out && break; sleep 0.1; done
app_port=$(grep -o '"port":[0-9]*' app.out | cut -d: -f2)
curl -sf "localhost:$app_port/v1/chat/completions" -H 'x-user: demo' -H 'Content-Type: application/json' \
  -d '{"model": "meta/llama-3.1-8b-instruct", "messages": [{"role": "user", "content": "Hello"}]}' | grep -q '"total_tokens"'
curl -sf "localhost:$app_port/balance" | grep -Eq '"balance":[0-9]{1,3}\}' || { echo "check-package: the docs' app charged nothing"; cat app.out; exit 1; }
echo "check-package: ok"
