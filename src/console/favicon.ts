/** The console's icon: a small gauge as SVG, served at /console/favicon.svg (linked from every page) and /favicon.ico. */
import type { RequestHandler } from 'express';

export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="7" fill="#1f5fbf"/>' +
  '<path d="M7 22a9 9 0 0 1 18 0M16 22l5-7" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/>' +
  '<circle cx="16" cy="22" r="2.5" fill="#fff"/></svg>';

/**
 * Answers with the icon. Browsers read an SVG at /favicon.ico by its Content-Type, so one file serves both paths;
 * it may be cached for a day, as it changes only with a release.
 */
export const favicon: RequestHandler = (_req, res) => {
  res.setHeader('cache-control', 'public, max-age=86400');
  res.type('image/svg+xml').send(FAVICON_SVG);
};
