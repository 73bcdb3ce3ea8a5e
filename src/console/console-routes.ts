/**
 * The console under /console: the public model page (server-rendered), the built browser app's assets, and its
 * page routes, which all answer with the app's one HTML page. The JSON API under /console/api is mounted apart.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import { modelObject } from '../catalog/models-api';
import type { Catalog } from '../catalog/models';
import { modelPage } from './model-page';
import { securityHeaders } from './security-headers';

export interface ConsoleOptions {
  catalog: () => Catalog;
  /** The browser app as `npm run build` writes it (index.html and assets/); unset or missing: pages say to build it. */
  webDir?: string;
}

export function consoleRoutes(options: ConsoleOptions): Router {
  const router = Router();
  const indexFile = options.webDir === undefined ? undefined : join(options.webDir, 'index.html');
  // Read once: the page is a few hundred bytes and never changes while the process runs.
  const indexPage = indexFile !== undefined && existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;

  router.use(securityHeaders);

  router.get('/models', (_req, res) => {
    res.setHeader('cache-control', 'no-cache');
    res.type('html').send(modelPage(options.catalog().list().map(modelObject)));
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
