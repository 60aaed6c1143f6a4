import { z } from 'zod';

export const serverNameSchema = z.string().trim().min(1, 'is required').max(200).regex(/^[\w.:@/-]+$/, 'letters, digits and . _ - : @ / only');
export const trustServerSchema = z.object({ name: serverNameSchema });
