/**
 * The console's door to the API's shapes (src/api/): all of them, re-exported type-only, so no zod and no server code
 * reaches the bundle. Nothing is restated here: a shape changes in src/api/ and the console follows.
 */
export type * from '../../src/api';
