import { z } from 'zod';

export const sessionIdSchema = z.object({ sessionId: z.uuid('must be a session id') });
export const endUserSessionsSchema = z.object({ userId: z.uuid('must be a user id') });
