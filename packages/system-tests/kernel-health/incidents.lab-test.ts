/**
 * Kernel health end to end for every incident of the registry (@tide/contracts' KERNEL_INCIDENTS),
 * each from its case, cases/<slug>.ts (root): the incident runs in its own namespaces -> the real
 * agent, in-process, samples it -> the real console (production build, on a throwaway PostgreSQL)
 * opens the right finding (this host, the incident's namespace and port, or the PMTU path's target)
 * -> the incident's remedy -> the console resolves the finding.
 *
 * One console and one agent serve every case, and the cases run concurrently (their namespaces are
 * separate): a finding resolves only once the 1-minute window is quiet, so running them one after
 * the other would cost minutes each. A case waits (bounded) for the cases it names in `runsAfter`.
 * Time to open and to resolve is printed, never asserted. An incident whose test needs a console
 * and agent of its own has <slug>.lab-test.ts here instead (accept-queue); an incident with neither
 * fails here.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KERNEL_INCIDENTS, type KernelIncident, type KernelIncidentSlug } from "@tide/contracts";
import { listNamespaces } from "@tide/lab";
import { INCIDENT_PREFIX } from "@tide/lab/incidents";
import { PROBES_BINARY, startEndToEnd, type EndToEnd } from "../harness/end-to-end-harness";
import { IncidentContext, TEST_TIMEOUT_MS, type IncidentCase } from "./incident-case";

const HOST = "agent-e2e-incidents";
/** Longest wait of a case for the cases it runs after (they take ~100 s). */
const GATE_MAX_WAIT_MS = 240_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const exists = (file: string) => existsSync(new URL(file, import.meta.url));

/** The registry's incidents, each with its case (null: its own file, or none). */
const incidents: { incident: KernelIncident; c: IncidentCase | null }[] = await Promise.all(
  KERNEL_INCIDENTS.map(async (incident) => {
    if (!exists(`./cases/${incident.slug}.ts`)) return { incident, c: null };
    const module = (await import(`./cases/${incident.slug}.ts`)) as { incidentTest: IncidentCase };
    return { incident, c: module.incidentTest };
  }),
);
const shared = incidents.flatMap(({ incident, c }) => (c ? [{ incident, c }] : []));

/** Each shared case's end, pass or fail, for the cases that run after it. */
const ended = new Map<KernelIncidentSlug, { wait: Promise<void>; open: () => void }>(
  shared.map(({ incident }) => {
    let open = () => undefined as void;
    const wait = new Promise<void>((r) => (open = r));
    return [incident.slug, { wait, open }];
  }),
);

let env: EndToEnd | undefined;
const cleanups: (() => Promise<void>)[] = [];
const summary: string[] = [];

describe("kernel health end to end: every registry incident", () => {
  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error("incident end-to-end tests need root (namespaces)");
    if (!existsSync(PROBES_BINARY)) {
      throw new Error(`no ${PROBES_BINARY}: run \`make -C dataplane build/tide-probes\``);
    }
    for (const { c } of shared) if (c.beforeAgent) cleanups.push(await c.beforeAgent());
    env = await startEndToEnd({
      hostname: HOST,
      label: "incidents",
      agent: Object.assign(
        { roles: ["proxy"], probesBinary: PROBES_BINARY },
        ...shared.map(({ c }) => c.agent),
      ),
    });
    const probes = env.observations.latest()?.probes ?? [];
    console.log(`[incidents] probes: ${probes.map((p) => `${p.probe} ${p.state}`).join(", ")}`);
  }, 180_000);

  afterAll(async () => {
    try {
      await env?.teardown();
    } finally {
      for (const cleanup of cleanups) await cleanup();
      console.log(`[incidents] summary:\n${summary.join("\n")}`);
    }
    expect((await listNamespaces()).filter((n) => n.startsWith(INCIDENT_PREFIX))).toEqual([]);
  }, 60_000);

  for (const { incident, c } of incidents) {
    const name = `incident ${incident.number} (${incident.slug})`;
    if (c === null) {
      it(`${name} has an end-to-end test: cases/${incident.slug}.ts or ${incident.slug}.lab-test.ts`, () => {
        expect(exists(`./${incident.slug}.lab-test.ts`)).toBe(true);
      });
      continue;
    }
    const { title, runsAfter = [], setup, run } = c;
    it.concurrent(
      `${name}: ${title}`,
      async () => {
        try {
          // bounded: with `-t` filtering the others out, their ends never come
          await Promise.race([
            Promise.all(runsAfter.map((slug) => ended.get(slug)?.wait)),
            sleep(GATE_MAX_WAIT_MS),
          ]);
          if (env === undefined) throw new Error("the console and agent did not start (see beforeAll)");
          const h = await setup?.();
          try {
            await run(new IncidentContext(env, summary, incident.slug), h as never);
          } finally {
            await h?.teardown();
          }
        } finally {
          ended.get(incident.slug)?.open();
        }
      },
      TEST_TIMEOUT_MS,
    );
  }
});
