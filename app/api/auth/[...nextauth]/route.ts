import { handlers } from '@/lib/server/auth/auth';

export const { GET, POST } = handlers;
