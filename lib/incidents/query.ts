import { z } from 'zod';

// GET /api/v1/incidents/{ref}: JSON by default, `format=markdown` for the ticket report;
// `download=1` asks the browser to save it rather than show it.
export const incidentQuerySchema = z.strictObject({
  format: z.enum(['json', 'markdown']).optional(),
  download: z.enum(['1', 'true']).optional(),
});

export const incidentRefSchema = z.string().trim().min(1).max(200);
