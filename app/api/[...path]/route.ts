import { problem } from '@/lib/server/http/api-route';

// A path under /api that names no route: problem+json like every other API error (docs/api.md,
// "Errors"), not the console's HTML 404 page. Any method; the API's own routes match first.
const notFound = () => problem('not_found', 'No API route has this path; the reference is at /api-docs.');

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
