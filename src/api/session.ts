/**
 * `GET /console/api/session`: whether the request has a live console session, and its account if so. Always 200, so
 * the console can ask before it knows, and a signed-out browser logs no failed request.
 */
import { z } from 'zod';
import { meSchema } from './own-account';

export const sessionSchema = z.discriminatedUnion('signed_in', [
  z.strictObject({ signed_in: z.literal(false) }),
  z.strictObject({ signed_in: z.literal(true), account: meSchema }),
]);
export type SessionObject = z.infer<typeof sessionSchema>;
