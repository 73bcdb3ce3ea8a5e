/**
 * Every object the admin API, the self-service API and the CLI send or take: one zod schema each, with its mapper
 * from the store's record. The routes validate and answer with them; the CLI and the browser console import their
 * types (type-only in the browser, so no zod reaches the bundle).
 */
export * from './account';
export * from './budget';
export * from './code';
export * from './fields';
export * from './holdings';
export * from './key';
export * from './ledger';
export * from './limits';
export * from './model';
export * from './own-account';
export * from './own-key';
export * from './package';
export * from './product';
export * from './session';
export * from './usage';
export * from './webhook';
export * from './upstream';
