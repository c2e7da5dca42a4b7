/**
 * Binds on the command line and in output: "PROTO ADDRESS[/BITS]:PORT[-PORT]", e.g.
 * "tcp 203.0.113.10:443", "tcp 203.0.113.64/26:8000-8099", "udp [2001:db8::10]:53".
 * The protocol and the address may also be joined by a colon ("tcp:203.0.113.10:443") so the
 * value needs no quoting. Only syntax is checked here; the API checks addresses and overlaps.
 */
import { UsageError } from "../cli-io";
import { type BindReply } from "./replies";

export interface BindSpec {
  address: string;
  proto: "tcp" | "udp";
  portStart: number;
  portEnd?: number;
}

const BIND =
  /^(tcp|udp)[ :]+(?:\[([0-9a-fA-F:.]+(?:\/\d{1,3})?)\]|([0-9.]+(?:\/\d{1,2})?)):(\d{1,5})(?:-(\d{1,5}))?$/;

function port(text: string, bind: string): number {
  const n = Number(text);
  if (n > 65535) throw new UsageError(`--bind ${JSON.stringify(bind)}: port ${n} is above 65535`);
  return n;
}

export function parseBind(text: string): BindSpec {
  const m = BIND.exec(text.trim());
  if (!m)
    throw new UsageError(
      `--bind ${JSON.stringify(text)}: expected PROTO ADDRESS[/BITS]:PORT[-PORT], e.g. "tcp 203.0.113.10:443" or "udp [2001:db8::10]:53"`,
    );
  const portStart = port(m[4]!, text);
  const portEnd = m[5] === undefined ? undefined : port(m[5], text);
  if (portEnd !== undefined && portEnd < portStart)
    throw new UsageError(`--bind ${JSON.stringify(text)}: port range ${portStart}-${portEnd} is backwards`);
  return {
    proto: m[1] as "tcp" | "udp",
    address: (m[2] ?? m[3])!,
    portStart,
    ...(portEnd === undefined ? {} : { portEnd }),
  };
}

/** "tcp 203.0.113.10/32:443", the same form as `tidectl table diff`. */
export function formatBind(b: BindReply): string {
  const [address = b.address] = b.address.split("/");
  const net = `${address}/${b.prefixBits}`;
  const ports = b.portStart === b.portEnd ? `${b.portStart}` : `${b.portStart}-${b.portEnd}`;
  return `${b.proto} ${address.includes(":") ? `[${net}]` : net}:${ports}`;
}
