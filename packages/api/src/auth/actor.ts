import type { Role, Scope } from "@tide/contracts";

/** Who is calling: a signed-in user (session) or an API token acting for the user who made it. */
export interface Actor {
  kind: "user" | "token";
  userId: string;
  email: string;
  name: string;
  role: Role;
  tokenId: string | null;
  /** Shown in the audit log and table versions: "ada@example.com" or "token ci-drain (ada@example.com)". */
  label: string;
  scopes: readonly Scope[];
  /** The session this request came with (signed in through the console); absent for API tokens. */
  sessionId?: string | null;
}

/** Who is calling as an agent: the host its host token was issued for. */
export interface HostCaller {
  hostId: string;
  hostname: string;
  tokenId: string;
  /** Shown in audit and finding history: "host lb-fra-03 (htk_…)". */
  label: string;
}

/** The audit identity of work nobody asked for through the API (seed, tests, future health checks). */
export function systemActorRef(label = "system") {
  return { actorKind: "system" as const, actorId: null, actorLabel: label };
}

export function actorRef(actor: Actor) {
  return {
    actorKind: actor.kind,
    actorId: actor.kind === "token" ? actor.tokenId : actor.userId,
    actorLabel: actor.label,
  };
}
