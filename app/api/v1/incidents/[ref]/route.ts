import { apiRoute, cacheControl } from '@/lib/server/http/api-route';
import { incidentApiBody, incidentReport, openIncident } from '@/lib/server/incidents';
import { incidentQuerySchema } from '@/lib/incidents/query';

const fileName = (ref: string, ext: string) => `incident-${ref.replace(/[^\w.-]+/g, '_').slice(0, 80)}.${ext}`;

export const GET = apiRoute<undefined, { ref: string }, typeof incidentQuerySchema>(
  { action: 'incidents.read', query: incidentQuerySchema },
  async ({ actor, params, query }) => {
    const markdown = query.format === 'markdown';
    const incident = await openIncident(actor, params.ref, markdown ? 'markdown' : 'json');
    if (!incident.ok) return incident;
    const body = markdown ? incidentReport(incident.value) : JSON.stringify(incidentApiBody(incident.value));
    const headers = new Headers({
      'content-type': markdown ? 'text/markdown; charset=utf-8' : 'application/json',
      'cache-control': cacheControl(body),
    });
    if (query.download)
      headers.set(
        'content-disposition',
        `attachment; filename="${fileName(incident.value.requestRef, markdown ? 'md' : 'json')}"`,
      );
    return new Response(body, { headers });
  },
);
