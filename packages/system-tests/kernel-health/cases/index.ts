/**
 * The end-to-end case of every incident of the registry (@tide/contracts' KERNEL_INCIDENTS), by
 * slug: a registry entry without its case here (cases/<slug>.ts) or its own file does not
 * type-check, and incidents.lab-test.ts runs them in registry order.
 */
import type { KernelIncidentSlug } from "@tide/contracts";
import type { IncidentCase, OwnFile } from "../incident-case";
import { listenerCrowdingCase } from "./listener-crowding";
import { pmtuBlackholeCase } from "./pmtu-blackhole";
import { portExhaustionCase } from "./port-exhaustion";
import { softirqStallCase } from "./softirq-stall";
import { synQueueCase } from "./syn-queue";
import { tcpCollapseCase } from "./tcp-collapse";

export const incidentCases = {
  // its namespaces exist before its agent starts, and it checks the host has no finding before
  "accept-queue": { ownFile: "accept-queue.lab-test.ts" },
  "syn-queue": synQueueCase,
  "pmtu-blackhole": pmtuBlackholeCase,
  "port-exhaustion": portExhaustionCase,
  "softirq-stall": softirqStallCase,
  "tcp-collapse": tcpCollapseCase,
  "listener-crowding": listenerCrowdingCase,
} as const satisfies Record<KernelIncidentSlug, IncidentCase | OwnFile>;
