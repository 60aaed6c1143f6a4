import { z } from 'zod';
import { roles } from '@/lib/auth/permissions';

export const emailSchema = z.string().trim().toLowerCase().max(254).pipe(z.email('must be an email address'));
export const passwordSchema = z.string().min(12, 'must be at least 12 characters').max(200);

export const createUserSchema = z.object({
  email: emailSchema,
  name: z.string().trim().min(1, 'is required').max(120).optional(),
  role: z.enum(roles, 'must be reviewer, support or admin'),
  password: passwordSchema,
  principalId: z.string().trim().min(1).max(200).optional(),
});
export type CreateUserInput = z.infer<typeof createUserSchema>;

export const changeRoleSchema = z.object({ userId: z.uuid(), role: z.enum(roles) });
export const setDisabledSchema = z.object({ userId: z.uuid(), disabled: z.boolean() });

export const signInSchema = z.object({ email: emailSchema, password: z.string().min(1, 'is required').max(200) });
