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
echo "check-package: ok"
