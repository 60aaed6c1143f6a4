import { z } from 'zod';
import { boundedString } from '@/lib/outcomes/schemas';

// GET /api/v1/incidents/{ref}: JSON by default, `format=markdown` for the ticket report;
// `download=1` asks the browser to save it rather than show it.
export const incidentQuerySchema = z.strictObject({
  format: z.enum(['json', 'markdown']).optional(),
  download: z.enum(['1', 'true']).optional(),
});

// The `{requestRef}` of the path, as stored: at most 200 characters, none that text cannot hold.
export const incidentRefSchema = boundedString(200).min(1);
