import type { Db } from "@tide/db";
import { newId } from "@tide/contracts";
import { systemActorRef } from "../auth/actor";
import { createPool, type NewPoolInput } from "../services/tables/pool.service";

const system = systemActorRef("seed");

/** Documentation address ranges (RFC 5737 / RFC 3849) and private proxy addresses only. */
function proxies(prefix: string, first: number, count: number, host: string) {
  return Array.from({ length: count }, (_, i) => ({
    address: `${prefix}.${first + i}`,
    hostname: `${host}-${String(i + 1).padStart(2, "0")}.dc1.example.net`,
  }));
}

export const demoPools = (directorIds: string[]): NewPoolInput[] => [
  {
    name: "www",
    description: "Public web front end (HTTP/HTTPS, IPv4 and IPv6 VIPs)",
    binds: [
      { address: "203.0.113.10", proto: "tcp", portStart: 80 },
      { address: "203.0.113.10", proto: "tcp", portStart: 443 },
      { address: "2001:db8::10", proto: "tcp", portStart: 443 },
    ],
    proxies: proxies("10.20.0", 10, 8, "proxy-www"),
    directorIds,
  },
  {
    name: "api",
    description: "API gateway: a /26 of VIPs with a port range",
    binds: [{ address: "203.0.113.64/26", proto: "tcp", portStart: 8000, portEnd: 8099 }],
    proxies: proxies("10.20.1", 10, 16, "proxy-api"),
    directorIds,
  },
  {
    name: "dns",
    description: "Authoritative DNS over UDP and TCP, hashed on source address and port",
    hashFields: ["src_addr", "src_port"],
    binds: [
      { address: "203.0.113.53", proto: "udp", portStart: 53 },
      { address: "203.0.113.53", proto: "tcp", portStart: 53 },
    ],
    proxies: proxies("10.20.2", 10, 4, "proxy-dns"),
    directorIds: directorIds.slice(0, 1),
  },
];

/** Seed the demo fleet once: existing pools and directors are left as they are. */
export async function seedDemoFleet(db: Db): Promise<string[]> {
  const created: string[] = [];
  const directorIds: string[] = [];
  for (const hostname of ["director-01.dc1.example.net", "director-02.dc1.example.net"]) {
    const d = await db.director.upsert({
      where: { hostname },
      create: { id: newId("director"), hostname },
      update: {},
      select: { id: true },
    });
    directorIds.push(d.id);
  }
  for (const pool of demoPools(directorIds)) {
    const exists = await db.pool.findUnique({ where: { name: pool.name }, select: { id: true } });
    if (exists) continue;
    await createPool(db, system, pool);
    created.push(pool.name);
  }
  return created;
}
