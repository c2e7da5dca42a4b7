import type { Bind, BindInput } from "@tide/contracts";

/** One row of the binds editor, as typed (ports as text: "443" or "8000-8099"). */
export interface BindRow {
  /** Stable React key; never sent. */
  key: string;
  address: string;
  proto: "tcp" | "udp";
  ports: string;
}

let nextKey = 0;
export function newBindRow(init: Partial<Omit<BindRow, "key">> = {}): BindRow {
  nextKey += 1;
  return { key: `bind-${nextKey}`, address: "", proto: "tcp", ports: "", ...init };
}

/** The editor's rows for a pool's binds (address with its prefix when it is a network). */
export function rowsFromBinds(binds: readonly Bind[]): BindRow[] {
  return binds.map((b) => {
    const [address = b.address] = b.address.split("/");
    const single = b.prefixBits === (address.includes(":") ? 128 : 32);
    return newBindRow({
      address: single ? address : `${address}/${b.prefixBits}`,
      proto: b.proto === "udp" ? "udp" : "tcp",
      ports: b.portStart === b.portEnd ? String(b.portStart) : `${b.portStart}-${b.portEnd}`,
    });
  });
}

const PORTS = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/;

/** "443" -> 443..443, "8000-8099" -> 8000..8099; null when it is neither. Range checks are the API's. */
export function parsePorts(text: string): { portStart: number; portEnd: number } | null {
  const m = PORTS.exec(text);
  if (!m) return null;
  const portStart = Number(m[1]);
  return { portStart, portEnd: m[2] === undefined ? portStart : Number(m[2]) };
}

export const PORTS_HINT = "Give a port (443) or a range (8000-8099).";

/**
 * The binds to send, or the rows whose ports are not numbers (keyed like the API's fields,
 * "binds[1].ports"). Addresses are checked by the API, which names the bind at fault.
 */
export function bindInputsOf(
  rows: readonly BindRow[],
): { ok: true; binds: BindInput[] } | { ok: false; fields: Record<string, string> } {
  const fields: Record<string, string> = {};
  const binds: BindInput[] = [];
  rows.forEach((row, i) => {
    const ports = parsePorts(row.ports);
    if (!ports) fields[`binds[${i}].ports`] = PORTS_HINT;
    else binds.push({ address: row.address.trim(), proto: row.proto, ...ports });
  });
  return Object.keys(fields).length > 0 ? { ok: false, fields } : { ok: true, binds };
}

/**
 * The message for each part of row `i` from the API's fields: the port range is one input, so
 * portStart/portEnd land on "ports"; an overlap names the whole bind ("binds[1]").
 */
export function rowErrors(
  fields: Readonly<Record<string, string>>,
  i: number,
): { address?: string; proto?: string; ports?: string; row?: string } {
  const at = (suffix: string) => fields[`binds[${i}]${suffix}`];
  return {
    address: at(".address"),
    proto: at(".proto"),
    ports: at(".ports") ?? at(".portStart") ?? at(".portEnd"),
    row: at(""),
  };
}

/** Fields the binds editor shows next to its inputs. */
export function isBindField(path: string): boolean {
  return /^binds(\[\d+\](\.(address|proto|ports|portStart|portEnd))?)?$/.test(path);
}
