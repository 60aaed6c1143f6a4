import 'server-only';
import { revalidatePath } from 'next/cache';

/** Trust and policy show on three pages (servers, the tool inventory, policy): each change refreshes all of them. */
export function revalidateServers() {
  revalidatePath('/admin/servers');
  revalidatePath('/admin/tools');
  revalidatePath('/admin/policy');
}
