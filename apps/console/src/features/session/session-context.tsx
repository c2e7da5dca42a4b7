"use client";

import type { Me, Scope } from "@tide/contracts";
import { createContext, useContext, type ReactNode } from "react";

/** The signed-in user, resolved once per page by the server layout. */
const SessionContext = createContext<Me | null>(null);

export function SessionProvider({ me, children }: { me: Me; children: ReactNode }) {
  return <SessionContext.Provider value={me}>{children}</SessionContext.Provider>;
}

export function useMe(): Me {
  const me = useContext(SessionContext);
  if (!me) throw new Error("useMe() outside <SessionProvider>");
  return me;
}

export function useHasScope(scope: Scope): boolean {
  return useMe().scopes.includes(scope);
}
