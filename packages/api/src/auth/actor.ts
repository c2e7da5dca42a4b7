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
}

export const systemActor = { kind: "system" as const, id: null, label: "system" };

export function actorRef(actor: Actor) {
  return {
    actorKind: actor.kind,
    actorId: actor.kind === "token" ? actor.tokenId : actor.userId,
    actorLabel: actor.label,
  };
}
