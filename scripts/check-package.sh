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
# stand-in upstream: its ports (8000 the stand-in's, 3000 its own) moved to free ones.
echo "check-package: running docs/library.md's app"
awk '/<!-- recipe: file my-app\/server.mjs -->/ { found = 1; next } found && /^```js/ { inside = 1; next } inside && /^```/ { exit } inside' \
  "$root/docs/library.md" >docs-app.mjs
grep -q createTokenmeter docs-app.mjs || { echo "check-package: docs/library.md has no my-app/server.mjs block"; exit 1; }
(cd "$root" && MOCK_PORT=0 MOCK_MAX_WORDS=12 exec node --import tsx bench/mock-upstream.ts) >stand-in.out &
stand_in=$!
app_pid=
trap 'kill $stand_in ${app_pid:-} 2>/dev/null; rm -rf "$scratch"' EXIT
for _ in $(seq 100); do grep -q '"ready"' stand-in.out && break; sleep 0.1; done
mock_port=$(grep -o '"port":[0-9]*' stand-in.out | cut -d: -f2)
app_port=$(node -e "const s = require('node:net').createServer().listen(0, () => { console.log(s.address().port); s.close(); })")
sed -e "s|localhost:8000|127.0.0.1:$mock_port|" -e "s|listen(3000)|listen($app_port)|" docs-app.mjs >server.mjs
node server.mjs &
app_pid=$!
for _ in $(seq 100); do curl -sf "localhost:$app_port/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "localhost:$app_port/v1/chat/completions" -H 'x-user: demo' -H 'Content-Type: application/json' \
  -d '{"model": "meta/llama-3.1-8b-instruct", "messages": [{"role": "user", "content": "Hello"}]}' | grep -q '"total_tokens"'
curl -sf "localhost:$app_port/balance" | grep -Eq '"balance":[0-9]{1,3}\}' || { echo "check-package: the docs' app charged nothing"; exit 1; }
echo "check-package: ok"
