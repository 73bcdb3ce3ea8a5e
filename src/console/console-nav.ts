/**
 * The console's navigation, one list for the browser app and the server-rendered model page, so both show the same
 * words; each label is also the heading of the page it opens.
 */

export interface NavPage {
  /** The page's path without a trailing slash (the overview's link adds one). */
  path: string;
  label: string;
}

/** Every signed-in account's pages. */
export const MEMBER_PAGES: readonly NavPage[] = [
  { path: '/console', label: 'Overview' },
  { path: '/console/keys', label: 'API keys' },
  { path: '/console/products', label: 'Buy tokens' },
  { path: '/console/usage', label: 'Usage' },
  { path: '/console/settings', label: 'Settings' },
];

/** The operator's pages (role admin), after the member's. */
export const OPERATOR_PAGES: readonly NavPage[] = [
  { path: '/console/admin/accounts', label: 'Accounts' },
  { path: '/console/admin/products', label: 'Products' },
  { path: '/console/admin/codes', label: 'Redemption codes' },
  { path: '/console/admin/usage', label: 'All usage' },
  { path: '/console/admin/webhooks', label: 'Webhooks' },
  { path: '/console/admin/upstreams', label: 'Upstreams' },
];

/** The public model page, last in every navigation. */
export const MODELS_PAGE: NavPage = { path: '/console/models', label: 'Models' };

/** Where a page's link points: the overview is `/console/` (the app's root), the others their path. */
export const navHref = (page: NavPage): string => (page.path === '/console' ? '/console/' : page.path);
