/**
 * glb-director's forwarding table JSON (the input of `glb-director-cli build-config`):
 *   {"tables": [{"hash_key": "<32 hex>", "seed": "<32 hex>",
 *                "binds": [{"ip": "addr" | "addr/bits", "proto": "tcp" | "udp",
 *                           "port": n | "port_start": n, "port_end": n}],
 *                "backends": [{"ip": "addr", "state": "active" | "draining" | "inactive" | "filling",
 *                              "healthy": bool}]}]}
 * Stricter than the original: every field is required and type-checked (the original reads a
 * missing "healthy" as false and a missing port as 0), duplicate backends are rejected.
 * Unknown keys are ignored, as glb-healthcheck adds its own (e.g. "healthchecks").
 */
import { AddressError, formatAddress, parseAddress, parseCidr } from "./address";
import { MAX_BACKENDS, MAX_BINDS, type Backend, type Bind, type ProxyState, type TableSpec } from "./types";

export class GlbConfigError extends Error {
  override name = "GlbConfigError";
  /** Where in the document, e.g. "tables[0].backends[3].state". */
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
    this.path = path;
  }
}

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: Json): string {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  return `${typeof v} ${JSON.stringify(v)}`;
}

function hex16(v: Json, path: string): Uint8Array {
  if (typeof v !== "string" || !/^[0-9a-fA-F]{32}$/.test(v)) {
    throw new GlbConfigError(path, `must be 32 hex digits (16 bytes), got ${describe(v)}`);
  }
  return Uint8Array.from(Buffer.from(v, "hex"));
}

function port(v: Json, path: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 65535) {
    throw new GlbConfigError(path, `must be an integer port 0..65535, got ${describe(v)}`);
  }
  return v;
}

function array(v: Json, path: string, max: number): Json[] {
  if (!Array.isArray(v)) throw new GlbConfigError(path, `must be an array, got ${describe(v)}`);
  if (v.length > max) throw new GlbConfigError(path, `has ${v.length} entries, at most ${max}`);
  return v;
}

function parseBind(v: Json, path: string): Bind {
  if (!isObject(v)) throw new GlbConfigError(path, `must be an object, got ${describe(v)}`);
  if (typeof v.ip !== "string")
    throw new GlbConfigError(`${path}.ip`, `must be an address or CIDR string, got ${describe(v.ip)}`);
  let cidr;
  try {
    cidr = parseCidr(v.ip);
  } catch (e) {
    throw new GlbConfigError(`${path}.ip`, e instanceof AddressError ? e.message : String(e));
  }
  if (v.proto !== "tcp" && v.proto !== "udp") {
    throw new GlbConfigError(`${path}.proto`, `must be "tcp" or "udp", got ${describe(v.proto)}`);
  }
  let portStart: number;
  let portEnd: number;
  if (v.port !== undefined) {
    if (v.port_start !== undefined || v.port_end !== undefined) {
      throw new GlbConfigError(path, `give either "port" or "port_start"/"port_end", not both`);
    }
    portStart = portEnd = port(v.port, `${path}.port`);
  } else {
    if (v.port_start === undefined && v.port_end === undefined) {
      throw new GlbConfigError(path, `needs "port" or "port_start" and "port_end"`);
    }
    portStart = port(v.port_start, `${path}.port_start`);
    portEnd = port(v.port_end, `${path}.port_end`);
    if (portStart > portEnd) {
      throw new GlbConfigError(path, `port_start ${portStart} is greater than port_end ${portEnd}`);
    }
  }
  return {
    address: formatAddress(cidr.address.bytes),
    prefixBits: cidr.prefixBits,
    proto: v.proto,
    portStart,
    portEnd,
  };
}

const STATES: readonly ProxyState[] = ["active", "draining", "inactive", "filling"];

function parseBackend(v: Json, path: string): Backend {
  if (!isObject(v)) throw new GlbConfigError(path, `must be an object, got ${describe(v)}`);
  if (typeof v.ip !== "string")
    throw new GlbConfigError(`${path}.ip`, `must be an address string, got ${describe(v.ip)}`);
  let address: string;
  try {
    address = formatAddress(parseAddress(v.ip).bytes);
  } catch (e) {
    throw new GlbConfigError(`${path}.ip`, e instanceof AddressError ? e.message : String(e));
  }
  if (typeof v.state !== "string" || !(STATES as readonly string[]).includes(v.state)) {
    throw new GlbConfigError(
      `${path}.state`,
      `must be one of ${STATES.join(", ")}, got ${describe(v.state)}`,
    );
  }
  if (typeof v.healthy !== "boolean") {
    throw new GlbConfigError(`${path}.healthy`, `must be true or false, got ${describe(v.healthy)}`);
  }
  return { address, state: v.state as ProxyState, healthy: v.healthy };
}

function parseTable(v: Json, path: string): TableSpec {
  if (!isObject(v)) throw new GlbConfigError(path, `must be an object, got ${describe(v)}`);
  const hashKey = hex16(v.hash_key, `${path}.hash_key`);
  const seed = hex16(v.seed, `${path}.seed`);
  const binds = array(v.binds, `${path}.binds`, MAX_BINDS).map((b, i) => parseBind(b, `${path}.binds[${i}]`));
  const backendsJson = array(v.backends, `${path}.backends`, MAX_BACKENDS);
  if (backendsJson.length === 0) throw new GlbConfigError(`${path}.backends`, "needs at least one backend");
  const seen = new Map<string, number>();
  const backends = backendsJson.map((b, i) => {
    const backend = parseBackend(b, `${path}.backends[${i}]`);
    const dup = seen.get(backend.address);
    if (dup !== undefined) {
      throw new GlbConfigError(`${path}.backends[${i}].ip`, `${backend.address} is already backends[${dup}]`);
    }
    seen.set(backend.address, i);
    return backend;
  });
  if (backends.every((b) => b.state === "inactive")) {
    throw new GlbConfigError(
      `${path}.backends`,
      "every backend is inactive; a table needs at least one that is not",
    );
  }
  return { hashKey, seed, binds, backends };
}

/** Parses and validates a glb-director forwarding table JSON document. */
export function parseGlbConfigJson(text: string): TableSpec[] {
  let doc: Json;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new GlbConfigError("$", `not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isObject(doc)) throw new GlbConfigError("$", `must be an object with "tables", got ${describe(doc)}`);
  const tables = array(doc.tables, "tables", Number.MAX_SAFE_INTEGER);
  if (tables.length === 0) throw new GlbConfigError("tables", "needs at least one table");
  return tables.map((t, i) => parseTable(t, `tables[${i}]`));
}
