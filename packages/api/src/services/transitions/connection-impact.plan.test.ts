import type { ProxyState } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import {
  PROPORTIONAL_ESTIMATE,
  planConnectionImpact,
  type EstablishedFigure,
  type ImpactProxy,
} from "./connection-impact.plan";
import type { PoolTableDiff } from "../tables/table.service";

type Share = PoolTableDiff["shares"][number];

/** Proxy i of a pool: id prx_i, host proxy-i, address 10.0.0.i. */
const proxy = (i: number, before: ProxyState, after: ProxyState = before): ImpactProxy => ({
  id: `prx_${i}`,
  hostname: `proxy-${i}`,
  address: `10.0.0.${i}`,
  before,
  after,
});

const share = (i: number, before: number, after: number): Share => ({
  address: `10.0.0.${i}`,
  hostname: `proxy-${i}`,
  before: { primary: before, secondary: 0 },
  after: { primary: after, secondary: 0 },
});

/** Only the shares matter to the plan; the rest is a well-formed empty diff. */
const diff = (shares: Share[]): PoolTableDiff => ({
  rowsPrimaryChanged: 0,
  rowsSecondaryChanged: 0,
  rowsChanged: 0,
  sample: [],
  shares,
  hashKeyChanged: false,
  hashFields: { before: ["src_addr"], after: ["src_addr"], changed: false },
  flowsMoved: null,
  binds: { added: [], removed: [] },
  statusChanges: [],
});

const counts = (...c: (number | null)[]): Map<string, EstablishedFigure> =>
  new Map(
    c.map((n, i) => [
      `prx_${i + 1}`,
      n === null ? { count: null, reason: "no report for 12 s" } : { count: n },
    ]),
  );

describe("connection impact of a proxy change", () => {
  it("drain: every connection of the draining proxy reaches it by second chance, exactly", () => {
    const impact = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "active"), proxy(3, "active", "draining")],
      diff([share(1, 21845, 32768), share(2, 21845, 32768), share(3, 21846, 0)]),
      counts(100, 200, 37),
    );
    expect(impact.viaSecondChance).toEqual({ count: 37, exact: true });
    expect(impact.kept).toEqual({ count: 300, exact: true });
    expect(impact.broken).toEqual({ count: 0, exact: true });
    expect(impact.unknown).toEqual([]);
    expect(impact.estimate).toBeNull();
  });

  it("deactivate with connections left: exactly the proxy's count breaks", () => {
    const impact = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "active"), proxy(3, "draining", "inactive")],
      diff([share(1, 32768, 32768), share(2, 32768, 32768), share(3, 0, 0)]),
      counts(100, 200, 42),
    );
    expect(impact.broken).toEqual({ count: 42, exact: true });
    expect(impact.viaSecondChance).toEqual({ count: 0, exact: true });
    expect(impact.kept).toEqual({ count: 300, exact: true });
    expect(impact.proxies.find((p) => p.proxyId === "prx_3")).toMatchObject({ established: 42, broken: 42 });
  });

  it("deactivate of a drained proxy breaks nothing", () => {
    const impact = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "active"), proxy(3, "draining", "inactive")],
      diff([share(1, 32768, 32768), share(2, 32768, 32768), share(3, 0, 0)]),
      counts(100, 200, 0),
    );
    expect(impact.broken).toEqual({ count: 0, exact: true });
  });

  it("fill: the old primaries' connections move to second chance in proportion to rows handed over", () => {
    // proxy-3 takes a third of the rows: proxy-1 hands over 10,923 of 32,768 rows, proxy-2 10,922.
    const impact = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "active"), proxy(3, "inactive", "filling")],
      diff([share(1, 32768, 21845), share(2, 32768, 21846), share(3, 0, 21845)]),
      counts(300, 600, 0),
    );
    const expected = 300 * (10923 / 32768) + 600 * (10922 / 32768);
    expect(impact.viaSecondChance).toEqual({ count: Math.round(expected), exact: false });
    expect(impact.kept).toEqual({ count: 900 - Math.round(expected), exact: false });
    expect(impact.broken).toEqual({ count: 0, exact: true });
    expect(impact.estimate).toBe(PROPORTIONAL_ESTIMATE);
  });

  it("activate and abort of a drain move nothing to a hop and break nothing", () => {
    const activate = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "filling", "active")],
      diff([share(1, 32768, 32768), share(2, 32768, 32768)]),
      counts(10, 20),
    );
    expect(activate).toMatchObject({
      kept: { count: 30, exact: true },
      viaSecondChance: { count: 0, exact: true },
      broken: { count: 0, exact: true },
    });
    // The drained proxy leads its rows again; the others hand them back (proportional).
    const abort = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "draining", "active")],
      diff([share(1, 65536, 32768), share(2, 0, 32768)]),
      counts(100, 20),
    );
    expect(abort.kept).toEqual({ count: 70, exact: false });
    expect(abort.viaSecondChance).toEqual({ count: 50, exact: false });
    expect(abort.broken).toEqual({ count: 0, exact: true });
  });

  it("abort of a fill breaks the connections the filling proxy took", () => {
    const impact = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "filling", "inactive")],
      diff([share(1, 32768, 65536), share(2, 32768, 0)]),
      counts(10, 7),
    );
    expect(impact.broken).toEqual({ count: 7, exact: true });
  });

  it("an unknown count is null, never 0, and names the proxy and why", () => {
    const impact = planConnectionImpact(
      [proxy(1, "active"), proxy(2, "active"), proxy(3, "draining", "inactive")],
      diff([share(1, 32768, 32768), share(2, 32768, 32768), share(3, 0, 0)]),
      counts(100, 200, null),
    );
    expect(impact.broken).toEqual({ count: null, exact: false });
    expect(impact.kept).toEqual({ count: 300, exact: true });
    expect(impact.unknown).toEqual([{ proxyId: "prx_3", hostname: "proxy-3", reason: "no report for 12 s" }]);
  });

  it("a proxy with no figure at all is unknown; one the change does not touch is not listed", () => {
    const impact = planConnectionImpact(
      [proxy(1, "active", "draining"), proxy(2, "active"), proxy(3, "inactive")],
      diff([share(1, 32768, 0), share(2, 32768, 65536)]),
      new Map([["prx_1", { count: 5 }]]),
    );
    expect(impact.viaSecondChance).toEqual({ count: 5, exact: true });
    expect(impact.kept).toEqual({ count: null, exact: false });
    expect(impact.unknown).toEqual([
      { proxyId: "prx_2", hostname: "proxy-2", reason: "no report from its host" },
    ]);
  });

  it("with no table after (the last proxy of an unserved pool) a leaving proxy still breaks", () => {
    const impact = planConnectionImpact([proxy(1, "draining", "inactive")], null, counts(3));
    expect(impact.broken).toEqual({ count: 3, exact: true });
  });
});
