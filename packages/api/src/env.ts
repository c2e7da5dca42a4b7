import { isIP } from "node:net";
import { z } from "zod";

/** "192.0.2.1", "::1", "10.0.0.0/8", "fd00::/8": an address, or a network with its prefix length. */
function isAddressOrNetwork(entry: string): boolean {
  const [address = "", prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** Server configuration for the API layer, parsed once. */
const schema = z.object({
  DATABASE_URL: z.string().url().describe("PostgreSQL URL; `npm run up` points it at the embedded cluster"),
  TIDE_SESSION_HOURS: z.coerce.number().int().min(1).max(720).default(12),
  TIDE_DB_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(2)
    .max(500)
    .default(10)
    .describe(
      "Database connections one console process opens at most (its pool; the LISTEN connection is " +
        "one more). At start the console reads PostgreSQL's max_connections and takes at most a " +
        "third of what is left for ordinary users, so two consoles and the operator's own clients fit",
    ),
  TIDE_TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((e) => e.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine(isAddressOrNetwork, "an IP address or a CIDR network (10.0.0.0/8)")))
    .describe(
      "Comma-separated addresses/CIDRs of reverse proxies whose X-Forwarded-For the console believes " +
        "for sign-in throttling (e.g. 127.0.0.1,::1 for nginx on this host); default none: the " +
        "client is the socket's peer",
    ),
});

export type ApiEnv = z.infer<typeof schema>;

let parsed: ApiEnv | undefined;

export function apiEnv(): ApiEnv {
  if (!parsed) {
    const result = schema.safeParse(process.env);
    if (!result.success) {
      throw new Error(`invalid environment for @tide/api: ${z.prettifyError(result.error)}`);
    }
    parsed = result.data;
  }
  return parsed;
}

/**
 * Ingest and telemetry storage settings, parsed apart from DATABASE_URL so services and tests can
 * read them alone (services/telemetry/telemetry-compactor.ts keeps the tiers).
 * TIDE_OBSERVATION_RETENTION_MINUTES: minutes of one-second samples kept per host (default 60; the
 * newest ~2 minutes raw, the rest in compressed per-minute chunks, ~150 bytes a sample).
 * TIDE_OBSERVATION_ROLLUP_DAYS: days of one-minute rollups kept per host (default 30; ~540 bytes a
 * host-minute once packed by the hour, about 22 GiB for 1,000 hosts).
 * TIDE_EVALUATION_CACHE_SAMPLES: samples of the hosts' evaluation windows each console process keeps
 * in memory (default 70,000: a minute of ~1,100 hosts, ~5 kB of heap a sample; 0 turns it off and
 * every evaluation reads its window from the database; services/findings/evaluation-window-cache.ts).
 */
const ingestSchema = z.object({
  TIDE_OBSERVATION_RETENTION_MINUTES: z.coerce.number().int().min(5).max(10_080).default(60),
  TIDE_OBSERVATION_ROLLUP_DAYS: z.coerce.number().int().min(1).max(3_650).default(30),
  TIDE_EVALUATION_CACHE_SAMPLES: z.coerce.number().int().min(0).max(10_000_000).default(70_000),
});

let ingestParsed: z.infer<typeof ingestSchema> | undefined;

export function ingestEnv(): z.infer<typeof ingestSchema> {
  if (!ingestParsed) {
    const result = ingestSchema.safeParse(process.env);
    if (!result.success) {
      throw new Error(`invalid environment for @tide/api ingest: ${z.prettifyError(result.error)}`);
    }
    ingestParsed = result.data;
  }
  return ingestParsed;
}

/**
 * Request body caps in bytes (413 above them), parsed apart from DATABASE_URL like ingestEnv.
 * TIDE_MAX_BODY_BYTES (default 1 MiB): every REST and tRPC request body except agent ingest; the
 * largest legitimate one is a pool created with its binds and proxies (a few hundred bytes per proxy).
 * TIDE_MAX_AGENT_BODY_BYTES (default 16 MiB): POST /api/v1/agent/observations, a batch of samples
 * from a host with many namespaces; agents must keep their batches below it.
 * TIDE_INGEST_MAX_IN_FLIGHT (default 16): agent batches one console process works on at once; more
 * are answered 503 with Retry-After at once (http/ingest-admission.ts). A batch takes a few ms of
 * the console's CPU, so even 1,000 agents (~100 batches a second) keep only a handful in flight
 * while the console keeps up; at 1,000 agents on the 2-core bench machine 16 answered the median
 * batch in ~0.1 s where 64 let admitted batches queue for 0.3-0.5 s, with no more errors.
 * TIDE_INGEST_MAX_BYTES_IN_FLIGHT (default 8 MiB): body bytes of the agent batches one console
 * process works on at once; a batch that would go past it is answered 503 with Retry-After before
 * its body is read (one batch is always admitted when none is in flight, whatever its size). A
 * replayed batch is up to 4 MiB of JSON (the agent's BATCH_MAX_BYTES), and the count bound above let
 * 16 of them (64 MiB) be parsed and stored at once: on the 2-core bench machine each then took
 * longer than the agents' 10 s limit (82 of 204 POSTs of 20 replaying agents timed out, issue 27).
 * The console stores roughly 3-4 MiB of samples a second there, so 8 MiB in flight answers an
 * admitted batch within ~2-3 s.
 * TIDE_CALLER_CONCURRENCY (default 4): procedure calls one caller (an API token, a signed-in user,
 * a host) runs at once in one console process, tRPC batches and REST alike; the others wait in the
 * caller's own line (http/caller-slots.ts). Four of the pool's 10 database connections: one caller
 * cannot take them all, and a page's batch of reads still runs a few at a time.
 * TIDE_CALLER_QUEUE (default 1,000): calls a caller may have waiting beyond those (twenty 50-call
 * tRPC batches; a waiting call holds no connection, only its place); more, or a wait over 5 s,
 * are answered 503 busy with Retry-After.
 */
const httpSchema = z.object({
  TIDE_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(16 * 1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  TIDE_MAX_AGENT_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(256 * 1024 * 1024)
    .default(16 * 1024 * 1024),
  TIDE_INGEST_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(100_000).default(16),
  TIDE_INGEST_MAX_BYTES_IN_FLIGHT: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(4 * 1024 * 1024 * 1024)
    .default(8 * 1024 * 1024),
  TIDE_CALLER_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(4),
  TIDE_CALLER_QUEUE: z.coerce.number().int().min(0).max(1_000_000).default(1_000),
});

let httpParsed: z.infer<typeof httpSchema> | undefined;

export function httpEnv(): z.infer<typeof httpSchema> {
  if (!httpParsed) {
    const result = httpSchema.safeParse(process.env);
    if (!result.success) {
      throw new Error(`invalid environment for @tide/api http: ${z.prettifyError(result.error)}`);
    }
    httpParsed = result.data;
  }
  return httpParsed;
}

/**
 * TIDE_PUBLIC_URL: the console's URL as hosts reach it (https://console.example.net, a path prefix
 * allowed), put in the `tide-agent enroll <URL> --token …` command an enrollment token comes with.
 * Unset: the URL the admin's own request came to (X-Forwarded-Proto/Host behind a proxy), which is
 * right unless the admin reaches the console by another name than the hosts do.
 */
const publicUrlSchema = z.object({
  TIDE_PUBLIC_URL: z.preprocess(
    (v) => (v === "" ? undefined : v), // an empty value (a unit file's placeholder) means unset
    z
      .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
      .transform((u) => u.replace(/\/+$/, ""))
      .optional(),
  ),
});

let publicUrlParsed: z.infer<typeof publicUrlSchema> | undefined;

export function publicUrlEnv(): z.infer<typeof publicUrlSchema> {
  if (!publicUrlParsed) {
    const result = publicUrlSchema.safeParse(process.env);
    if (!result.success) {
      throw new Error(`invalid environment for @tide/api: ${z.prettifyError(result.error)}`);
    }
    publicUrlParsed = result.data;
  }
  return publicUrlParsed;
}
