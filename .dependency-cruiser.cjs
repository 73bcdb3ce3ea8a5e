// The layering of src/ (and of the browser console in web/), checked by dependency-cruiser in `npm run lint`.
//
// Folders are grouped by caller: each route folder is one API's routes, named for who calls it (admin: operators'
// scripts, the CLI and the console's operator pages; console-api: account holders in the console; console: its
// pages; proxy: OpenAI clients; payments: Stripe; cli: the operator's terminal). Below them, src/api holds the shapes
// every API sends and takes; below that, the features the routes share (accounts, products); below those, the
// foundation (store, http, requests, catalog, limits, metering, config, observability, cluster). Imports point down only, and
// never in a circle (types included). The files at src/'s top compose the layers and are imported by none of them.
'use strict';

const ROUTES = 'admin|console-api|console|proxy|payments|cli';
const FEATURES = 'accounts|products';
const FOUNDATION = 'store|http|requests|catalog|limits|metering|config|observability|cluster|upstreams';
/** The server modules the browser bundles (their values, not only types): the navigation and the endpoint snippets both render. */
const BROWSER_SHARED = '^src/console/(console-nav|endpoint-snippets)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle (type imports count): one of its files should move down, or an interface split out.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'foundation-imports-nothing-above',
      comment:
        'store, http, requests, catalog, limits, metering, config, observability, cluster and upstreams import no feature, shape or route.',
      severity: 'error',
      from: { path: `^src/(${FOUNDATION})/` },
      to: { path: [`^src/(${FEATURES}|api|${ROUTES})/`, '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'features-import-no-shape-or-route',
      comment: 'accounts and products serve every API alike: they know no route and no wire shape.',
      severity: 'error',
      from: { path: `^src/(${FEATURES})/` },
      to: { path: [`^src/(api|${ROUTES})/`, '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'shapes-import-no-route',
      comment: 'src/api is below every route: the routes, the CLI and the console import it, never the reverse.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: [`^src/(products|${ROUTES})/`, '^src/[^/]+\\.ts$'] },
    },
    {
      name: 'routes-apart',
      comment: "One API's routes import no other API's: what two share moves down (a shape to src/api, logic to a feature).",
      severity: 'error',
      from: { path: `^src/(${ROUTES})/` },
      to: { path: `^src/(${ROUTES})/`, pathNot: '^src/$1/' },
    },
    {
      name: 'nothing-imports-the-composition',
      comment: "src/'s top files (index, routers, app, tokenmeter, server) build the layers; no layer imports them.",
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'cli-talks-http',
      comment: 'The CLI reaches the proxy over HTTP: of the server it imports the shapes only.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/', pathNot: '^src/(cli|api)/' },
    },
    {
      name: 'console-takes-shapes-only',
      comment: 'The browser console imports nothing of the server but the shapes in src/api (and the shared navigation and snippets).',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: '^src/', pathNot: ['^src/api/', BROWSER_SHARED] },
    },
    {
      name: 'console-takes-types-only',
      comment: 'Type-only imports of the server (import type), so neither zod nor server code reaches the bundle.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: ['^src/', 'node_modules/zod/'], pathNot: BROWSER_SHARED, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'browser-shared-imports-nothing',
      comment: 'What the browser bundles from src/ (the navigation the server pages share) imports nothing itself.',
      severity: 'error',
      from: { path: BROWSER_SHARED },
      to: {},
    },
    {
      name: 'src-imports-no-test',
      severity: 'error',
      from: { path: '^(src|web)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import of a module that cannot be found (a typo, or a package missing from package.json).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a circle of types is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^dist/', '^web/src/.*\\.css$'] },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.d.ts'],
    },
  },
};
