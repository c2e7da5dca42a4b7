/**
 * Row assignment: (per-row rendezvous order, proxy states) -> primary/secondary per row.
 *
 * Both variants first drop inactive proxies from the order and look at the first two (a, b).
 *
 * variant "glb" (glb-director's builder, byte-compatible):
 *   - a is "bad" when draining or unhealthy; then swap if b's state is active.
 *     b's health is NOT checked (the original compares b's state to HEALTH_UP, which equals
 *     STATE_ACTIVE), and a filling b is never swapped in.
 *
 * variant "tide" (default). usable = healthy && (active || filling):
 *   - a usable: (a, b).
 *   - a unusable, b usable: (b, a) - a keeps the second hop so its flows survive (second chance).
 *   - neither usable: the first two usable proxies of the order; a single usable proxy takes
 *     both slots; with no usable proxy at all, (a, b) unchanged.
 *
 * Both: a pool with exactly one non-inactive proxy gets it in both slots (the original reads
 * a stale sort slot there); a pool with none is an error.
 */
import { rankRow, rendezvousContext, type RendezvousOrder } from "./rendezvous";
import { TABLE_ROWS, type ProxyStatus, type Variant } from "./types";

export interface RowAssignment {
  /** TABLE_ROWS proxy indexes (into the order's address list). */
  primary: Uint16Array;
  secondary: Uint16Array;
}

export interface AssignOptions {
  variant?: Variant;
}

export class AssignError extends Error {
  override name = "AssignError";
}

export function assignRows(
  order: RendezvousOrder,
  states: readonly ProxyStatus[],
  options: AssignOptions = {},
): RowAssignment {
  const variant = options.variant ?? "tide";
  if (variant !== "glb" && variant !== "tide") throw new AssignError(`unknown variant ${String(variant)}`);
  const n = order.addresses.length;
  if (states.length !== n) {
    throw new AssignError(`got ${states.length} proxy states for ${n} proxies; they must be index-aligned`);
  }
  const eligible = new Uint8Array(n);
  const usable = new Uint8Array(n);
  const glbBad = new Uint8Array(n);
  const active = new Uint8Array(n);
  let eligibleCount = 0;
  let usableCount = 0;
  let lastEligible = -1;
  states.forEach((s, i) => {
    if (s.state !== "active" && s.state !== "draining" && s.state !== "inactive" && s.state !== "filling") {
      throw new AssignError(
        `proxy ${i} (${order.addresses[i]}) has unknown state ${JSON.stringify(s.state)}`,
      );
    }
    if (s.state === "inactive") return;
    eligible[i] = 1;
    eligibleCount++;
    lastEligible = i;
    if (s.healthy && (s.state === "active" || s.state === "filling")) {
      usable[i] = 1;
      usableCount++;
    }
    if (s.state === "draining" || !s.healthy) glbBad[i] = 1;
    if (s.state === "active") active[i] = 1;
  });
  if (eligibleCount === 0) {
    throw new AssignError(`no proxy to assign: all ${n} proxies are inactive (or the list is empty)`);
  }

  const primary = new Uint16Array(TABLE_ROWS);
  const secondary = new Uint16Array(TABLE_ROWS);
  if (eligibleCount === 1) {
    primary.fill(lastEligible);
    secondary.fill(lastEligible);
    return { primary, secondary };
  }

  const { depth, order: prefix } = order;
  const full = depth === n;
  // Scratch for rows whose prefix is too short: the full order of that row.
  let fullOrder: Uint8Array | null = null;
  let scratchHi: Int32Array | null = null;
  let scratchLo: Int32Array | null = null;
  let scratchIdx: Uint8Array | null = null;
  const fullRow = (row: number): Uint8Array => {
    if (!fullOrder || !scratchHi || !scratchLo || !scratchIdx) {
      fullOrder = new Uint8Array(n);
      scratchHi = new Int32Array(n + 1);
      scratchLo = new Int32Array(n + 1);
      scratchIdx = new Uint8Array(n + 1);
    }
    rankRow(rendezvousContext(order), row, n, fullOrder, 0, scratchHi, scratchLo, scratchIdx);
    return fullOrder;
  };

  const tide = variant === "tide";
  for (let row = 0; row < TABLE_ROWS; row++) {
    let list: Uint8Array = prefix;
    let start = row * depth;
    let len = depth;
    // Retry once with the full order when the prefix lacks what the rules need.
    for (let attempt = 0; attempt < 2; attempt++) {
      let a = -1;
      let b = -1;
      let i = 0;
      for (; i < len; i++) {
        const p = list[start + i]!;
        if (!eligible[p]) continue;
        if (a < 0) a = p;
        else {
          b = p;
          break;
        }
      }
      if (b < 0) {
        if (full || attempt === 1)
          throw new AssignError(`internal: row ${row} has fewer than 2 eligible proxies`);
        list = fullRow(row);
        start = 0;
        len = n;
        continue;
      }
      if (!tide) {
        if (glbBad[a] && active[b]) {
          primary[row] = b;
          secondary[row] = a;
        } else {
          primary[row] = a;
          secondary[row] = b;
        }
        break;
      }
      if (usable[a]) {
        primary[row] = a;
        secondary[row] = b;
        break;
      }
      if (usable[b]) {
        primary[row] = b;
        secondary[row] = a;
        break;
      }
      if (usableCount === 0) {
        primary[row] = a;
        secondary[row] = b;
        break;
      }
      // Neither of the first two is usable: the first two usable proxies further down.
      let u1 = -1;
      let u2 = -1;
      for (i = i + 1; i < len; i++) {
        const p = list[start + i]!;
        if (!usable[p]) continue;
        if (u1 < 0) u1 = p;
        else {
          u2 = p;
          break;
        }
      }
      if (u2 < 0 && usableCount === 1 && u1 >= 0) u2 = u1;
      if (u2 < 0) {
        if (full || attempt === 1)
          throw new AssignError(`internal: row ${row} lacks usable proxies in its order`);
        list = fullRow(row);
        start = 0;
        len = n;
        continue;
      }
      primary[row] = u1;
      secondary[row] = u2;
      break;
    }
  }
  return { primary, secondary };
}
