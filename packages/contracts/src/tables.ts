import { z } from "zod";
import { HashField, Proxy, TableVersionSummary } from "./fleet";
import { ProxyState } from "./proxy-state-machine";
import { PoolId, ProxyId, TableVersionId } from "./ids";

export const VersionBackend = z
  .object({
    slot: z.number().int().describe("Index of the backend in the GLBD file (what rows refer to)"),
    proxyId: z.string().describe("Proxy id"),
    address: z.string().describe("Proxy IPv4 address"),
    hostname: z.string(),
    state: ProxyState,
    healthy: z.boolean(),
  })
  .describe("A backend of a table version, as it was when the version was built");

export const TableVersionDetail = TableVersionSummary.extend({
  backends: z.array(VersionBackend),
});

export const TableRows = z.object({
  primary: z.string().describe("base64 of 65,536 bytes: backend slot of each row's primary"),
  secondary: z.string().describe("base64 of 65,536 bytes: backend slot of each row's secondary"),
  backends: z.array(VersionBackend),
});

const Pair = z.object({ primary: z.string(), secondary: z.string() });
const Share = z.object({
  primary: z.number().int().describe("Rows where the proxy is primary (of 65,536)"),
  secondary: z.number().int().describe("Rows where the proxy is secondary (of 65,536)"),
});

export const TableDiff = z
  .object({
    rowsPrimaryChanged: z.number().int().describe("Rows whose primary changed"),
    rowsSecondaryChanged: z.number().int().describe("Rows whose secondary changed"),
    rowsChanged: z.number().int().describe("Rows where either changed"),
    sample: z
      .array(z.object({ row: z.number().int(), before: Pair, after: Pair }))
      .describe("The first changed rows (up to 500), by address"),
    shares: z
      .array(z.object({ address: z.string(), hostname: z.string(), before: Share, after: Share }))
      .describe("Each proxy's share of primary and secondary, before and after"),
    hashKeyChanged: z
      .boolean()
      .describe("The flow hash key differs: flows land on other rows even where no row changed"),
    hashFields: z
      .object({ before: z.array(HashField), after: z.array(HashField), changed: z.boolean() })
      .describe("The fields hashed to pick a row, before and after"),
    flowsMoved: z
      .object({
        sampled: z.int().describe("Synthetic client flows hashed with both tables"),
        moved: z.int().describe("Of those, flows whose primary proxy differs"),
        fraction: z.number().min(0).max(1).describe("moved / sampled"),
      })
      .nullable()
      .describe(
        "When the hash key or fields changed, the estimated flows that change proxy (row counts alone " +
          "do not show it); null otherwise",
      ),
    binds: z
      .object({ added: z.array(z.string()), removed: z.array(z.string()) })
      .describe('VIP binds only after (added) or only before (removed), e.g. "tcp 203.0.113.10/32:443"'),
    statusChanges: z
      .array(
        z.object({
          address: z.string(),
          hostname: z.string(),
          before: z.object({ state: ProxyState, healthy: z.boolean() }),
          after: z.object({ state: ProxyState, healthy: z.boolean() }),
          primaryRowsChanged: z
            .int()
            .describe("Rows where it gains or loses primary: 0 when it moves no row"),
        }),
      )
      .describe("Proxies in both tables whose state or health changed, even when no row moves"),
  })
  .describe("What changes between two forwarding tables");
export type TableDiff = z.infer<typeof TableDiff>;

export const TableDiffResult = z.object({
  from: TableVersionSummary,
  to: TableVersionSummary,
  diff: TableDiff,
});

export const Port = z.coerce.number().int().min(0).max(65535);

export const ExplainInput = z.object({
  versionId: TableVersionId,
  srcAddr: z.string().min(2).describe("Client (source) IPv4 or IPv6 address"),
  srcPort: Port.optional().describe("Client source port"),
  dstAddr: z.string().optional().describe("Destination (VIP) address"),
  dstPort: Port.optional().describe("Destination port"),
});

const Hop = z.object({ address: z.string(), hostname: z.string(), proxyId: z.string() });
export const FlowExplanation = z
  .object({
    row: z.number().int().describe("Table row (0..65535)"),
    digest: z.string().describe("Flow hash digest, hex"),
    primary: Hop,
    secondary: Hop,
    outerSourcePort: z.number().int().describe("UDP source port of the GUE packet"),
    hashFields: z.array(HashField),
  })
  .describe("Where a flow goes: row, primary and secondary, outer source port");

const ConnectionFigure = z
  .object({
    count: z
      .int()
      .min(0)
      .nullable()
      .describe(
        "Established connections; null = unknown (a proxy it depends on sent no fresh figure: see unknown)",
      ),
    exact: z
      .boolean()
      .describe(
        "true: counted from the proxies' own connection tables; false: a proportional estimate, or unknown",
      ),
  })
  .describe("A number of established connections, and whether it is exact");

export const ConnectionImpact = z
  .object({
    kept: ConnectionFigure.describe("Established connections whose proxy stays primary of their row"),
    viaSecondChance: ConnectionFigure.describe(
      "Established connections that will reach their proxy as a second-chance hop (the row's secondary): " +
        "all of a draining proxy's; on a fill, the old primaries' connections in proportion to the rows " +
        "they hand over",
    ),
    broken: ConnectionFigure.describe(
      "Established connections on a proxy that leaves the table: they have no hop left and are reset " +
        "(deactivate: exactly its established count); should be 0",
    ),
    proxies: z
      .array(
        z.object({
          proxyId: ProxyId,
          hostname: z.string(),
          established: z
            .int()
            .min(0)
            .nullable()
            .describe("Its established connections to the pool's VIPs; null = unknown"),
          kept: z.number().min(0).nullable(),
          viaSecondChance: z.number().min(0).nullable(),
          broken: z.int().min(0).nullable(),
        }),
      )
      .describe("The same figures per proxy (estimates unrounded); null where its count is unknown"),
    unknown: z
      .array(
        z.object({
          proxyId: ProxyId,
          hostname: z.string(),
          reason: z.string().describe('Why there is no fresh figure, for humans, e.g. "no report for 12 s"'),
        }),
      )
      .describe("Proxies whose established count is unknown (no fresh report): figures they feed are null"),
    estimate: z
      .string()
      .nullable()
      .describe("How the inexact figures were estimated, for humans; null when every figure is exact"),
  })
  .describe(
    "What a change does to the established connections the proxies report (their agents' connection " +
      "tables on the pool's VIPs), predicted before it is applied",
  );
export type ConnectionImpact = z.infer<typeof ConnectionImpact>;

export const TransitionPreview = z.object({
  allowed: z.boolean(),
  refusal: z.object({ code: z.string(), message: z.string() }).nullable(),
  proxy: Proxy,
  from: ProxyState,
  to: ProxyState.nullable(),
  diff: TableDiff.nullable(),
  basedOnVersion: z
    .number()
    .int()
    .nullable()
    .describe(
      "The pool's current table version when the preview was computed (null: none yet); pass it as " +
        "expectedVersion to refuse the action if the pool changed since",
    ),
  impact: ConnectionImpact.nullable().describe(
    "The established connections the action would keep, send by second chance and break; null when refused",
  ),
});
export type TransitionPreview = z.infer<typeof TransitionPreview>;

export const TransitionResult = z.object({
  proxy: Proxy,
  tableVersion: TableVersionSummary.nullable().describe(
    "The version the change wrote; null when no proxy is left in rotation (only in a pool no director serves)",
  ),
});

export const Paged = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

export const PoolIdInput = z.object({ poolId: PoolId });
export const ProxyIdInput = z.object({ proxyId: ProxyId });
