/** What the shell hands every signed-in page: kept apart from app.tsx, which imports the pages, so no import circles. */
import type { MeObject } from './api-types';

export interface PageProps {
  me: MeObject;
  /** Fetches the account again (after something changed its balance). */
  refresh: () => Promise<void>;
}
