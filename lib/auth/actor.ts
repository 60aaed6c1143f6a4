// Who acts: a person, an API key, or the system (the command line, the schedule). Every data-access
// function takes one and asks authorize() (./permissions.ts) whether it may.
import type { Viewer } from './permissions';
import type { ApiScope } from '@/lib/credentials/scopes';

/**
 * A person: the console session's viewer, or the same person through a personal token (`tokenId`).
 * The discriminant is optional so that a Viewer as the session reads it is a person as it is.
 */
export type Person = Viewer & { kind?: 'user'; tokenId?: string | null };

/** A service's API key: its scopes say what it may do, its organization (null: any) what it may see. */
export type ApiKeyActor = {
  kind: 'apiKey';
  keyId: string;
  name: string;
  scopes: ApiScope[];
  organization: string | null;
};

/** The system itself, named as its audit entries name it. */
export type SystemActor = { kind: 'system'; name: 'cli' | 'system' };

export type Actor = Person | ApiKeyActor | SystemActor;

/** Who can come in over HTTP (a bearer credential or the console session): never the system. */
export type RemoteActor = Person | ApiKeyActor;

/** The command line (`npm run cli`, the seed): bootstrap without a signed-in person. */
export const cli: SystemActor = { kind: 'system', name: 'cli' };
/** The in-process schedule (retention, expiry). */
export const scheduler: SystemActor = { kind: 'system', name: 'system' };

/** How the audit log names an actor: an e-mail, `api_key:<id>`, or `cli` / `system`. */
export function auditName(actor: Actor): string {
  switch (actor.kind) {
    case 'apiKey':
      return `api_key:${actor.keyId}`;
    case 'system':
      return actor.name;
    default:
      return actor.email;
  }
}

/** The one organization an actor is limited to, or null when it sees every one. */
export const organizationOf = (actor: Actor): string | null => (actor.kind === 'apiKey' ? actor.organization : null);
