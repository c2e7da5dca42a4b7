import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Finding,
  FindingKind,
  findingFingerprint,
  findingIdOf,
  findingIncident,
  FLEET_HEALTH_INCIDENT,
  HealthFindingKind,
  KernelFindingKind,
  netnsKey,
  type FindingSubject,
} from "./findings";
import { KERNEL_INCIDENTS, LAST_KERNEL_INCIDENT } from "./incidents";

const web = { inode: 4026532511, name: "web", root: false };

function subjectOf(fields: Partial<FindingSubject> = {}): FindingSubject {
  return { hostId: "lb-fra-03", netns: null, port: null, process: null, cpu: null, target: null, ...fields };
}

/** Paths of object properties without a description in a JSON Schema (root and $defs). */
function undocumented(schema: unknown): string[] {
  const out: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (node === null || typeof node !== "object") return;
    const n = node as Record<string, unknown>;
    const props = n.properties as Record<string, Record<string, unknown>> | undefined;
    for (const [k, v] of Object.entries(props ?? {})) {
      if (typeof v.description !== "string") out.push(`${path}.${k}`);
      walk(v, `${path}.${k}`);
    }
    for (const key of ["items", "additionalProperties"]) walk(n[key], `${path}[]`);
    for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
      for (const x of (n[key] as unknown[] | undefined) ?? []) walk(x, path);
    }
  };
  const root = schema as { $defs?: Record<string, unknown> };
  walk(root, "#");
  for (const [name, def] of Object.entries(root.$defs ?? {})) walk(def, name);
  return out;
}

function overflowFinding() {
  const subject = subjectOf({ netns: web, port: 8080 });
  const fingerprint = findingFingerprint("accept_queue_overflow", subject);
  return {
    id: findingIdOf(fingerprint),
    fingerprint,
    kind: "accept_queue_overflow",
    incident: 1,
    severity: "critical",
    status: "open",
    title: "Accept queue overflow on :8080 in namespace web",
    subject,
    evidence: [
      {
        metric: "TcpExtListenOverflows",
        value: 8,
        unit: "per_second",
        ratePerSecond: 8,
        threshold: { warn: 1, critical: 5 },
        window: { from: "2026-11-22T23:00:00.000Z", to: "2026-11-22T23:01:00.000Z", seconds: 60 },
      },
    ],
    explanation: "The listener on port 8080 drops connections after the handshake.",
    remedy: {
      summary: "Accept faster and raise the backlog.",
      steps: [
        {
          scope: "namespace",
          action: "Raise somaxconn in namespace web.",
          command: "ip netns exec web sysctl -w net.core.somaxconn=4096",
        },
      ],
    },
    firstSeenAt: "2026-11-22T23:01:00.000Z",
    lastSeenAt: "2026-11-22T23:01:00.000Z",
    resolvedAt: null,
  };
}

describe("findingFingerprint", () => {
  it("names kind and subject fields that apply, in a fixed order", () => {
    expect(findingFingerprint("accept_queue_overflow", subjectOf({ netns: web, port: 8080 }))).toBe(
      "accept_queue_overflow|host=lb-fra-03|netns=name:web|port=8080",
    );
    expect(findingFingerprint("pmtu_blackhole", subjectOf({ target: "10.30.0.2" }))).toBe(
      "pmtu_blackhole|host=lb-fra-03|target=10.30.0.2",
    );
  });

  it("keeps the comm and leaves the pid out, so a restarted service has the same problem", () => {
    const a = findingFingerprint(
      "connect_port_exhaustion",
      subjectOf({ process: { pid: 10, comm: "haproxy" } }),
    );
    const b = findingFingerprint(
      "connect_port_exhaustion",
      subjectOf({ process: { pid: 99, comm: "haproxy" } }),
    );
    const c = findingFingerprint(
      "connect_port_exhaustion",
      subjectOf({ process: { pid: 10, comm: "envoy" } }),
    );
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it("names a namespace by root, name or inode", () => {
    expect(netnsKey({ inode: 4026531840, name: null, root: true })).toBe("root");
    expect(netnsKey(web)).toBe("name:web");
    expect(netnsKey({ ...web, inode: 4026539999 })).toBe("name:web");
    expect(netnsKey({ inode: 4026532733, name: null, root: false })).toBe("inode:4026532733");
  });
});

describe("findingIdOf", () => {
  it("is FNV-1a 64 in Crockford base32 with the fnd_ prefix", () => {
    // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (reference vector), computed independently in Python.
    expect(findingIdOf("a")).toBe("fnd_ayryw9j303v4c");
    expect(findingIdOf("accept_queue_overflow|host=lb-fra-03|netns=name:web|port=8080")).toBe(
      "fnd_50avvy33qrwhd",
    );
  });

  it("gives different ids to different problems", () => {
    const ids = new Set(FindingKind.options.map((k) => findingIdOf(findingFingerprint(k, subjectOf()))));
    expect(ids.size).toBe(FindingKind.options.length);
  });
});

describe("Finding", () => {
  it("accepts a finding as diagnostics makes it", () => {
    expect(Finding.parse(overflowFinding())).toEqual(overflowFinding());
  });

  it.each<[string, (f: ReturnType<typeof overflowFinding>) => void]>([
    ["an id without prefix", (f) => (f.id = "50avvy33qrwhd")],
    ["an unknown kind", (f) => (f.kind = "disk_full")],
    ["an unknown severity", (f) => (f.severity = "major")],
    ["an incident past the registry's last", (f) => (f.incident = LAST_KERNEL_INCIDENT + 1)],
    ["no evidence", (f) => (f.evidence = [])],
    ["a remedy without steps", (f) => (f.remedy.steps = [])],
    ["an unknown remedy scope", (f) => (f.remedy.steps[0]!.scope = "cluster")],
  ])("rejects %s", (_, mutate) => {
    const f = overflowFinding();
    mutate(f);
    expect(Finding.safeParse(f).success).toBe(false);
  });

  it("maps every kernel kind to an incident of the registry, each incident covered; health kinds to none", () => {
    expect(Object.keys(findingIncident).sort()).toEqual([...FindingKind.options].sort());
    expect(new Set(KernelFindingKind.options.map((k) => findingIncident[k]))).toEqual(
      new Set(KERNEL_INCIDENTS.map((i) => i.number)),
    );
    for (const k of HealthFindingKind.options) expect(findingIncident[k]).toBe(FLEET_HEALTH_INCIDENT);
  });

  it("describes every field", () => {
    const schema = z.toJSONSchema(Finding) as { $defs?: Record<string, unknown> };
    expect(Object.keys(schema.$defs ?? {})).toEqual(expect.arrayContaining(["Finding"]));
    expect(undocumented(schema)).toEqual([]);
    // The check itself finds a field without a description.
    expect(undocumented(z.toJSONSchema(z.object({ a: z.object({ b: z.int() }).describe("A") })))).toEqual([
      "#.a.b",
    ]);
  });
});
