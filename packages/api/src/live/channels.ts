/**
 * The PostgreSQL NOTIFY channels the live pages listen on (live/host-live.ts): each named once,
 * here, for every service that notifies and the listener.
 */

/**
 * A host's observations or findings changed (ingest, finding evaluation, health findings), after
 * the writing transaction commits. Payload: the host_… id, or "<host id> findings".
 */
export const OBSERVATIONS_CHANNEL = "tide_observations";

/** A pool's proxies' health or traffic changed. Payload: the pool id, or "<pool id> traffic". */
export const POOLS_CHANNEL = "tide_pools";

/**
 * Channel the database itself notifies (triggers of migration director_pool_sync) when anything a
 * desired state is made of changed: table versions, directors and their pools, PMTU targets.
 * The migration's SQL spells it too: migrations are history and never change.
 */
export const DESIRED_CHANNEL = "tide_desired";

/**
 * Channel the database notifies (triggers of migration auth_notify) when what authenticates a
 * caller changed: "token:<id>" (an API token revoked, expired, rescoped), "user:<id>" (a role, a
 * disabled user), "host-token:<id>" (a host token revoked), "all" (a table truncated). The
 * authentication caches (auth/auth-cache.ts, auth/host-token-cache.ts) forget what it names.
 */
export const AUTH_CHANNEL = "tide_auth";
