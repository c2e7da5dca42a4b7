export { createDb, type Db } from "./client";
export * from "./selects";
export { Prisma, type ProxyState, type Role, type ActorKind } from "@prisma/client";
