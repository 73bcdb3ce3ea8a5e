# tokenmeter's image: compile TypeScript in a build stage, run the compiled JS as a non-root user in a slim stage.
# Build: docker build -t tokenmeter .   Run: see docker-compose.yml and docs/deployment.md.

# Node 24, the active LTS; CI runs the suite on it (and on Node 20, the oldest line `engines` allows).
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: full dependencies, tsc, then drop devDependencies --------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first so the dependency layer is cached until they change.
# --ignore-scripts: the only install script in the tree is esbuild's, which only checks its binary; the binary itself
# comes in esbuild's platform package, so the console build below works without it.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The browser console: bundled by esbuild into dist/web, which the runtime stage copies with the rest of dist.
COPY web ./web
COPY scripts/build.js scripts/build-console.js scripts/build-bin.js scripts/build-lua.js ./scripts/
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime: compiled JS and console assets, production node_modules and the default models file ---------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Files stay owned by root and read-only to the app user: the process never writes to its own directory.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# MODELS_FILE defaults to config/models.yaml relative to the working directory; mount your own over it.
COPY config/models.yaml ./config/models.yaml
# The one place the process writes: the settlement journal (JOURNAL_FILE), kept on a volume across restarts.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME /app/data
# The node base image's unprivileged user (uid 1000).
USER node
EXPOSE 8080
# node itself, as slim images have no curl or wget. Keep HOST at its default (0.0.0.0) so 127.0.0.1 answers.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "require('http').get({host:'127.0.0.1',port:process.env.PORT||8080,path:'/healthz',timeout:4000},r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1)).on('timeout',()=>process.exit(1))"]
# V8's young generation capped at 8 MiB a semi-space: Node 22+ grows it to several times that under
# many open streams, which doubled RSS per open stream for no speed (docs/development.md#node-support). Same flag as `npm start`.
ENV NODE_OPTIONS=--max-semi-space-size=8
# node directly, not npm start: prestart would look for stale sources, and npm would stand between PID 1 and node for SIGTERM.
CMD ["node", "dist/server.js"]
