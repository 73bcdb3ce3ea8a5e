/**
 * The console under /console: the public model page (server-rendered), the built browser app's assets, and its
 * page routes, which all answer with the app's one HTML page. The JSON API under /console/api is mounted apart.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import { modelObject } from '../api/model';
import type { Catalog } from '../catalog/models';
import { favicon } from './favicon';
import { modelPage } from './model-page';
import { securityHeaders } from './security-headers';
import type { Viewer } from './server-nav';

export interface ConsoleOptions {
  catalog: () => Catalog;
  /** The browser app as `npm run build` writes it (index.html and assets/); unset or missing: pages say to build it. */
  webDir?: string;
  /** Who is signed in (read-only), so the model page shows the console's navigation to them; unset: never. */
  signedIn?: (req: Request) => Promise<Viewer | undefined>;
}

export function consoleRoutes(options: ConsoleOptions): Router {
  const router = Router();
  const indexFile = options.webDir === undefined ? undefined : join(options.webDir, 'index.html');
  // Read once: the page is a few hundred bytes and never changes while the process runs.
  const indexPage = indexFile !== undefined && existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;

  router.use(securityHeaders);

  router.get('/favicon.svg', favicon);

  router.get('/models', async (req, res) => {
    // The page is public: when the session cannot be read (the store is down), it shows without the account's links.
    const viewer = await options.signedIn?.(req).catch(() => undefined);
    // Private once it names the account; no-cache either way, so a new catalog shows at once.
    res.setHeader('cache-control', viewer ? 'private, no-cache' : 'no-cache');
    res.setHeader('vary', 'cookie');
    // The snippets name the address the page was reached at, as the Connect card names the browser's.
    const origin = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    res.type('html').send(modelPage(options.catalog().list().map(modelObject), viewer, origin));
  });

  if (options.webDir !== undefined) {
    // Revalidated on every load (ETag), so a new build is picked up at once; the files are small.
    router.use(
      '/assets',
      express.static(join(options.webDir, 'assets'), {
        index: false,
        redirect: false,
        etag: true,
        setHeaders: (res) => res.setHeader('cache-control', 'no-cache'),
      }),
    );
  }

  // Every other page is the browser app, which routes on the path; the API and unknown assets fall through to 404s.
  router.get(/^\/(?!api\/|api$|assets\/).*/, (req: Request, res: Response) => {
    if (req.originalUrl === '/console') return res.redirect(301, '/console/');
    res.setHeader('cache-control', 'no-cache');
    if (indexPage === undefined) {
      return res.status(503).type('text').send('The console is not built: run `npm run build`.\n');
    }
    res.type('html').send(indexPage);
  });

  return router;
}
