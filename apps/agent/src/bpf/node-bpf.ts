import { createRequire } from "node:module";

/**
 * The parts of the npm `bpf` package (libbpf bindings, a prebuilt N-API addon) the agent uses.
 * Typed here rather than through the package's own typings, which pull in @types/node 12.
 */
export interface NodeBpf {
  /** bpf_obj_get: a new fd of a pinned object; throws (errno) when absent or not permitted. */
  objGet(path: string): number;
  /** Takes the fd (transfer) and reads the map's info (type, sizes). */
  createMapRef(fd: number, options: { transfer: boolean }): BpfMapRef;
  MapType: Record<string, number | string>;
  /** The raw addon: no buffer size checks, so the caller sizes every buffer (per-CPU values!). */
  native: {
    /** 0 or -errno. */
    mapLookupElem(fd: number, key: Uint8Array, value: Uint8Array, flags: number): number;
    /** [0 or -errno, entries read]; -ENOENT with a full count means the array's end was reached. */
    mapLookupBatch(
      fd: number,
      inBatch: Uint8Array | undefined,
      outBatch: Uint8Array,
      keys: Uint8Array,
      values: Uint8Array,
      count: number,
      opts: { elemFlags?: number; flags?: number },
    ): [number, number];
  };
}

export interface BpfMapRef {
  readonly fd: number;
  readonly type: number;
  readonly keySize: number;
  readonly valueSize: number;
  readonly maxEntries: number;
  close(): void;
}

export type NodeBpfLoad = { ok: true; bpf: NodeBpf } | { ok: false; error: string };

let loaded: NodeBpfLoad | null = null;

/**
 * Load the `bpf` module once, lazily; never throws. It fails to load when the package is absent
 * (an agent bundle copied without node_modules), for an addon built for another platform, or on
 * a libc it cannot link with: the caller then keeps the JSON control socket path.
 */
export function loadNodeBpf(): NodeBpfLoad {
  if (loaded !== null) return loaded;
  try {
    const require = createRequire(import.meta.url);
    const api = require("bpf") as Omit<NodeBpf, "native">;
    // The package's own entry point re-exports everything but the raw addon; dist/util holds it.
    const { native } = require("bpf/dist/util") as Pick<NodeBpf, "native">;
    if (typeof api.objGet !== "function" || typeof native.mapLookupElem !== "function")
      throw new Error("unexpected API (not bpf 1.3)");
    loaded = { ok: true, bpf: { ...api, native } };
  } catch (err) {
    // First line only: a missing module's message goes on with its require stack.
    const why = (err instanceof Error ? err.message : String(err)).split("\n")[0] ?? "";
    loaded = { ok: false, error: `npm bpf module not loaded: ${why}` };
  }
  return loaded;
}
