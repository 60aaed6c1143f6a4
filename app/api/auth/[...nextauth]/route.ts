import { handlers } from '@/lib/server/http/auth';

export const { GET, POST } = handlers;
