import type { Prisma } from "@prisma/client";
import { rawRows, type Db } from "../client";

type Client = Db | Prisma.TransactionClient;

/** A flow as stored from an agent's reading (contracts AgentRedirectFlow's fields). */
export interface StoredFlowInput {
  clientAddress: string;
  clientPort: number;
  address: string;
  port: number;
  proto: string;
  firstSeenAt: string;
  secondChance: { packets: number; lastSeenAt: string } | null;
  alternateHash: { packets: number; lastSeenAt: string } | null;
  lastResort: { packets: number; lastSeenAt: string } | null;
}

/**
 * Store a host's flows reading in one statement: each flow's newest record (a later reading of the
 * same flow replaces its counts; times only move forward, as readings may arrive out of order),
 * and the host's flows_read_at (and flows_truncated_at when the reading listed fewer than matched).
 * An empty reading still moves flows_read_at: a change report waits for it to pass its window.
 */
export async function storeRedirectFlows(
  db: Client,
  hostId: string,
  readAt: Date,
  flows: readonly StoredFlowInput[],
  truncated: boolean,
): Promise<void> {
  const col = <T>(f: (x: StoredFlowInput) => T) => flows.map(f);
  const at = (k: StoredFlowInput["secondChance"]) => k?.lastSeenAt ?? null;
  const lastSeen = (f: StoredFlowInput) =>
    [at(f.secondChance), at(f.alternateHash), at(f.lastResort), f.firstSeenAt]
      .filter((t): t is string => t !== null)
      .reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b));
  await rawRows(
    db,
    `WITH h AS (
       UPDATE hosts SET flows_read_at = GREATEST(coalesce(flows_read_at, $2::timestamptz), $2::timestamptz),
                        flows_truncated_at = CASE WHEN $3 THEN $2::timestamptz ELSE flows_truncated_at END
        WHERE id = $1 RETURNING 1),
     f AS (
       INSERT INTO redirect_flows AS r (host_id, client_address, client_port, address, port, proto,
                                        first_seen_at, second_chance_packets, second_chance_at,
                                        alternate_hash_packets, alternate_hash_at,
                                        last_resort_packets, last_resort_at, last_seen_at)
       SELECT $1, * FROM unnest($4::text[], $5::int[], $6::text[], $7::int[], $8::text[],
                                $9::timestamptz[], $10::bigint[], $11::timestamptz[], $12::bigint[],
                                $13::timestamptz[], $14::bigint[], $15::timestamptz[], $16::timestamptz[])
       ON CONFLICT (host_id, client_address, client_port, address, port, proto) DO UPDATE SET
         first_seen_at = EXCLUDED.first_seen_at,
         second_chance_packets = EXCLUDED.second_chance_packets,
         second_chance_at = GREATEST(r.second_chance_at, EXCLUDED.second_chance_at),
         alternate_hash_packets = EXCLUDED.alternate_hash_packets,
         alternate_hash_at = GREATEST(r.alternate_hash_at, EXCLUDED.alternate_hash_at),
         last_resort_packets = EXCLUDED.last_resort_packets,
         last_resort_at = GREATEST(r.last_resort_at, EXCLUDED.last_resort_at),
         last_seen_at = GREATEST(r.last_seen_at, EXCLUDED.last_seen_at)
       WHERE EXCLUDED.last_seen_at >= r.last_seen_at
       RETURNING 1)
     SELECT (SELECT count(*) FROM h)::int AS hosts, (SELECT count(*) FROM f)::int AS flows`,
    [
      hostId,
      readAt.toISOString(),
      truncated,
      col((f) => f.clientAddress),
      col((f) => f.clientPort),
      col((f) => f.address),
      col((f) => f.port),
      col((f) => f.proto),
      col((f) => f.firstSeenAt),
      col((f) => f.secondChance?.packets ?? 0),
      col((f) => at(f.secondChance)),
      col((f) => f.alternateHash?.packets ?? 0),
      col((f) => at(f.alternateHash)),
      col((f) => f.lastResort?.packets ?? 0),
      col((f) => at(f.lastResort)),
      col(lastSeen),
    ],
  );
}

/** A stored flow with one kind's time in a window. */
export interface WindowFlow {
  hostname: string;
  clientAddress: string;
  clientPort: number;
  address: string;
  port: number;
  proto: string;
  secondChancePackets: number;
  secondChanceAt: Date | null;
  alternateHashPackets: number;
  alternateHashAt: Date | null;
  lastResortPackets: number;
  lastResortAt: Date | null;
}

/**
 * The flows of the named hosts that took a kind in the window [from, to]; the kinds that did not
 * have a null time. A record keeps each kind's last packet and the flow's first, not every packet:
 *  - a last resort is one moment (the flow is reset): in the window when its last packet is;
 *  - a second chance or the alternate hash goes on for as long as the flow lives: in the window
 *    when its last packet came after the start and the record was made before the end (a flow
 *    that took it before the window, paused through it and took it again after would count).
 */
export async function flowsInWindow(
  db: Client,
  hostnames: readonly string[],
  from: Date,
  to: Date,
): Promise<WindowFlow[]> {
  const rows = await rawRows<{
    hostname: string;
    client_address: string;
    client_port: number;
    address: string;
    port: number;
    proto: string;
    first_seen_at: Date;
    second_chance_packets: string;
    second_chance_at: Date | null;
    alternate_hash_packets: string;
    alternate_hash_at: Date | null;
    last_resort_packets: string;
    last_resort_at: Date | null;
  }>(
    db,
    `SELECT h.name AS hostname, f.client_address, f.client_port, f.address, f.port, f.proto,
            f.first_seen_at, f.second_chance_packets::text, f.second_chance_at, f.alternate_hash_packets::text,
            f.alternate_hash_at, f.last_resort_packets::text, f.last_resort_at
       FROM redirect_flows f JOIN hosts h ON h.id = f.host_id
      WHERE h.name = ANY($1::text[]) AND f.last_seen_at >= $2::timestamptz
        AND f.first_seen_at <= $3::timestamptz`,
    [hostnames, from.toISOString(), to.toISOString()],
  );
  const ms = (t: Date) => new Date(t).getTime();
  const ongoing = (r: { first_seen_at: Date }, t: Date | null) =>
    t !== null && ms(t) >= from.getTime() && ms(r.first_seen_at) <= to.getTime() ? new Date(t) : null;
  const moment = (t: Date | null) =>
    t !== null && ms(t) >= from.getTime() && ms(t) <= to.getTime() ? new Date(t) : null;
  return rows.map((r) => ({
    hostname: r.hostname,
    clientAddress: r.client_address,
    clientPort: r.client_port,
    address: r.address,
    port: r.port,
    proto: r.proto,
    secondChancePackets: Number(r.second_chance_packets),
    secondChanceAt: ongoing(r, r.second_chance_at),
    alternateHashPackets: Number(r.alternate_hash_packets),
    alternateHashAt: ongoing(r, r.alternate_hash_at),
    lastResortPackets: Number(r.last_resort_packets),
    lastResortAt: moment(r.last_resort_at),
  }));
}

/** Forget flows not seen since `before` (kept an hour: change reports read them within minutes). */
export async function pruneRedirectFlows(db: Client, before: Date): Promise<number> {
  const [r] = await rawRows<{ n: number }>(
    db,
    `WITH d AS (DELETE FROM redirect_flows WHERE last_seen_at < $1::timestamptz RETURNING 1)
     SELECT count(*)::int AS n FROM d`,
    [before.toISOString()],
  );
  return r?.n ?? 0;
}
