import { PageSkeleton } from '@/components/ui/skeleton';

// Only where every role may look: a loading boundary streams the page, so a refusal (403) or a
// not-found (404) below it would answer 200.
export default function Loading() {
  return <PageSkeleton />;
}
