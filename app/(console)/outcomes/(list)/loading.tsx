import { PageSkeleton } from '@/components/ui/skeleton';
// In a route group of its own: the record pages (outcomes/[id]) are outside this boundary, so their
// 404 stays a 404 (a loading boundary streams, and a streamed page answers 200).

export default function Loading() {
  return <PageSkeleton title="Outcomes" rows={12} columns={6} />;
}
