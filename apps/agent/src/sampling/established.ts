import { ESTABLISHED_MAX_ENDPOINTS, type EstablishedCount } from "@tide/contracts";

/**
 * ESTABLISHED TCP sockets per local address:port, for the ss fallback: the same counts, order and
 * cap as tide-nsdiag (dataplane/nsdiag/tide_nsdiag.c), so that both paths report one truth.
 */
export interface EstablishedSummary {
  /** The ESTABLISHED_MAX_ENDPOINTS busiest local address:ports. */
  established: EstablishedCount[];
  /** Every ESTABLISHED socket, including those of address:ports left out. */
  establishedTotal: number;
}

/**
 * Local address as tide-nsdiag prints it: brackets and a %interface suffix dropped, an
 * IPv4-mapped IPv6 address (a dual-stack listener's accepted socket) as its IPv4 address.
 */
export function canonicalLocalAddress(text: string): string {
  let address = text.replace(/^\[(.*)\](?:%.*)?$/, "$1");
  const pct = address.indexOf("%");
  if (pct > 0) address = address.slice(0, pct);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped !== null ? mapped[1]! : address.toLowerCase();
}

/** Bytes of an address in hex (IPv4: 8 digits, IPv6: 32), to order ties as tide-nsdiag's memcmp. */
function addressKey(address: string): string {
  if (address.includes(".") && !address.includes(":")) {
    return address
      .split(".")
      .map((b) => Number(b).toString(16).padStart(2, "0"))
      .join("");
  }
  const [head = "", tail] = address.split("::");
  const groups = (s: string): string[] => (s === "" ? [] : s.split(":"));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const fill = Array<string>(Math.max(0, 8 - h.length - t.length)).fill("0");
  return [...h, ...fill, ...t].map((g) => g.padStart(4, "0")).join("");
}

const isIpv4 = (address: string): boolean => !address.includes(":");

/** Busiest first; ties by port, then IPv4 before IPv6, then address bytes (tide-nsdiag's cmp_est). */
export function compareEstablished(a: EstablishedCount, b: EstablishedCount): number {
  if (a.count !== b.count) return b.count - a.count;
  if (a.port !== b.port) return a.port - b.port;
  if (isIpv4(a.address) !== isIpv4(b.address)) return isIpv4(a.address) ? -1 : 1;
  const ka = addressKey(a.address);
  const kb = addressKey(b.address);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** Counts keyed by "address port" -> the busiest ESTABLISHED_MAX_ENDPOINTS, in order. */
export function topEstablished(counts: ReadonlyMap<string, EstablishedCount>): EstablishedCount[] {
  return [...counts.values()].sort(compareEstablished).slice(0, ESTABLISHED_MAX_ENDPOINTS);
}

/**
 * Count ESTABLISHED sockets per local address:port from `ss -Htn state established` lines
 * ("0 0 10.0.0.1:8080 10.0.0.2:51234": Recv-Q, Send-Q, local, peer; a leading ESTAB state
 * column, printed when several states are asked for, is accepted). Lines that do not parse are
 * skipped.
 */
export function parseSsEstablished(text: string): EstablishedSummary {
  const counts = new Map<string, EstablishedCount>();
  let total = 0;
  for (const line of text.split("\n")) {
    const cols = line.trim().split(/\s+/);
    const offset = cols[0] === "ESTAB" ? 1 : 0;
    const recvQ = cols[offset];
    const local = cols[offset + 2];
    if (recvQ === undefined || !/^\d+$/.test(recvQ) || local === undefined || cols.length < offset + 4)
      continue;
    const colon = local.lastIndexOf(":");
    const portText = local.slice(colon + 1);
    if (colon <= 0 || !/^\d+$/.test(portText) || Number(portText) > 65535) continue;
    const address = canonicalLocalAddress(local.slice(0, colon));
    if (address === "" || address.length > 45) continue;
    const port = Number(portText);
    const key = `${address} ${port}`;
    const entry = counts.get(key);
    if (entry === undefined) counts.set(key, { address, port, count: 1 });
    else entry.count++;
    total++;
  }
  return { established: topEstablished(counts), establishedTotal: total };
}

/**
 * Split `ss -Htn state listening state established` output (state column first) into the LISTEN
 * lines, for parseSsListeners, and the ESTAB lines, for parseSsEstablished: one fork for both.
 */
export function splitSsStates(text: string): { listening: string; established: string } {
  const listening: string[] = [];
  const established: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("ESTAB")) established.push(line);
    else if (line.trim() !== "") listening.push(line);
  }
  return { listening: listening.join("\n"), established: established.join("\n") };
}
