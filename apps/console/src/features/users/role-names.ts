import type { Role } from "@tide/contracts";

/** What each role may do, in the words the API's scopes mean. */
export const roleHelp: Record<Role, string> = {
  viewer: "viewer (read only)",
  operator: "operator (drain, fill, health)",
  admin: "admin (fleet changes, tokens, users)",
};
