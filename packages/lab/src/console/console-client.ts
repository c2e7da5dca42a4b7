/**
 * The console's REST API (/api/v1) as the lab uses it in console mode: registering its pool,
 * proxies and directors, host tokens for its agents, and the directors' sync status. Every reply is
 * parsed with the contract's schema; a refusal becomes LabError("console_error") with the console's
 * error code and details (a 409 on POST /directors carries the existing id there). The API token is
 * sent as a Bearer header and never put in a message.
 */
import {
  Director,
  FleetSync,
  PoolDetail,
  PoolSummary,
  PoolSync,
  Proxy,
  TransitionResult,
  type HashField,
  type ProxyAction,
} from "@tide/contracts";
import { z } from "zod";
import { LabError } from "../errors";

/** Per request, ms: registration writes table versions (65,536 rows each), a few hundred ms. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A bind as POST /pools takes it. */
export interface PoolBindInput {
  address: string;
  proto: "tcp" | "udp";
  portStart: number;
  portEnd?: number;
}

export interface CreatePoolRequest {
  name: string;
  description?: string;
  hashFields?: HashField[];
  binds: PoolBindInput[];
}

/** What the lab reads of a host token (packages/api's HostTokenSummary, without the rest). */
export const HostTokenRef = z
  .object({
    id: z.string().describe("Host token id"),
    hostname: z.string().describe("Host the token is for"),
    revokedAt: z.string().nullable().describe("When it was revoked, or null"),
  })
  .describe("A host token, without its secret");
export type HostTokenRef = z.infer<typeof HostTokenRef>;

const CreatedHostToken = z.object({
  token: z.string().startsWith("tide_host_").describe("The secret, shown once"),
  summary: HostTokenRef,
});

/** The body trpc-to-openapi sends on an error: tRPC's shape with Tide's code and details in data. */
const ErrorBody = z.object({
  message: z.string().optional(),
  data: z
    .object({
      tideCode: z.string().optional(),
      details: z.record(z.string(), z.unknown()).nullish(),
    })
    .optional(),
});

export class ConsoleRequestError extends LabError {
  readonly status: number;
  readonly tideCode: string | null;
  constructor(method: string, p: string, status: number, body: unknown) {
    const parsed = ErrorBody.safeParse(body);
    const tideCode = parsed.success ? (parsed.data.data?.tideCode ?? null) : null;
    const message = parsed.success ? (parsed.data.message ?? "") : "";
    super(
      "console_error",
      `${method} /api/v1${p}: HTTP ${status}${tideCode ? ` ${tideCode}` : ""} ${message}`,
      {
        status,
        tideCode,
        details: parsed.success ? (parsed.data.data?.details ?? null) : null,
      },
    );
    this.status = status;
    this.tideCode = tideCode;
  }
}

export class ConsoleClient {
  readonly url: string;
  readonly #token: string;

  constructor(url: string, token: string) {
    this.url = url.replace(/\/+$/, "");
    this.#token = token;
  }

  private async call<T>(method: string, p: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.url}/api/v1${p}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (e) {
      throw new LabError("console_error", `${method} ${this.url}/api/v1${p}: ${(e as Error).message}`);
    }
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      json = null;
    }
    if (!res.ok) throw new ConsoleRequestError(method, p, res.status, json);
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new LabError("console_error", `${method} /api/v1${p}: reply does not match the contract`, {
        issues: parsed.error.issues.slice(0, 5),
      });
    }
    return parsed.data;
  }

  listPools(): Promise<PoolSummary[]> {
    return this.call("GET", "/pools", z.array(PoolSummary));
  }

  getPool(poolId: string): Promise<PoolDetail> {
    return this.call("GET", `/pools/${poolId}`, PoolDetail);
  }

  createPool(input: CreatePoolRequest): Promise<PoolDetail> {
    return this.call("POST", "/pools", PoolDetail, input);
  }

  setBinds(poolId: string, binds: PoolBindInput[]): Promise<unknown> {
    return this.call("PUT", `/pools/${poolId}/binds`, z.unknown(), { binds, reason: "lab binds" });
  }

  setHashFields(poolId: string, hashFields: HashField[]): Promise<unknown> {
    return this.call("PUT", `/pools/${poolId}/hash-fields`, z.unknown(), {
      hashFields,
      reason: "lab hash fields",
    });
  }

  addProxy(poolId: string, input: { address: string; hostname: string }): Promise<Proxy> {
    return this.call("POST", `/pools/${poolId}/proxies`, Proxy, input);
  }

  proxyAction(
    proxyId: string,
    action: ProxyAction,
    reason?: string,
  ): Promise<z.infer<typeof TransitionResult>> {
    return this.call("POST", `/proxies/${proxyId}/${action}`, TransitionResult, reason ? { reason } : {});
  }

  listDirectors(): Promise<Director[]> {
    return this.call("GET", "/directors", z.array(Director));
  }

  /** POST /directors; a 409 (host name taken) resolves with the existing id from its details. */
  async registerDirector(hostname: string): Promise<{ id: string; created: boolean }> {
    try {
      const d = await this.call("POST", "/directors", Director, { hostname });
      return { id: d.id, created: true };
    } catch (e) {
      const id = e instanceof ConsoleRequestError && e.status === 409 ? e.details?.directorId : undefined;
      if (typeof id === "string") return { id, created: false };
      throw e;
    }
  }

  assignPool(directorId: string, poolId: string): Promise<Director> {
    return this.call("PUT", `/directors/${directorId}/pools/${poolId}`, Director, {});
  }

  createHostToken(hostname: string): Promise<{ token: string; summary: HostTokenRef }> {
    return this.call("POST", "/host-tokens", CreatedHostToken, { hostname });
  }

  listHostTokens(hostname: string): Promise<HostTokenRef[]> {
    return this.call("GET", `/host-tokens?hostname=${encodeURIComponent(hostname)}`, z.array(HostTokenRef));
  }

  revokeHostToken(tokenId: string): Promise<HostTokenRef> {
    return this.call("POST", `/host-tokens/${tokenId}/revoke`, HostTokenRef, {});
  }

  fleetSync(): Promise<FleetSync> {
    return this.call("GET", "/sync", FleetSync);
  }

  poolSync(poolId: string): Promise<PoolSync> {
    return this.call("GET", `/pools/${poolId}/sync`, PoolSync);
  }
}
