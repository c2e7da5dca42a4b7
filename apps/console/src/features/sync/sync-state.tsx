import type { DirectorPoolSyncState, DirectorSyncState, PoolSyncState } from "@tide/contracts";
import styles from "./sync.module.css";

type AnySyncState = DirectorPoolSyncState | DirectorSyncState | PoolSyncState;

const labels: Record<AnySyncState, string> = {
  in_sync: "in sync",
  propagating: "propagating",
  behind: "behind",
  not_served: "not served",
  unknown: "unknown",
  no_table: "no table yet",
  out_of_sync: "out of sync",
  silent: "silent",
  no_agent: "no agent",
  idle: "no pools",
  no_directors: "no directors",
};

/**
 * Colour says how sure and how bad: green served, blue on its way (within its expected time), grey
 * not known (late reports), amber out of sync past the expected time, red no agent in contact.
 */
const tones: Record<AnySyncState, string | undefined> = {
  in_sync: styles.good,
  idle: styles.good,
  no_table: styles.good,
  propagating: styles.pending,
  unknown: styles.unknown,
  no_directors: styles.unknown,
  behind: styles.warn,
  not_served: styles.warn,
  out_of_sync: styles.warn,
  silent: styles.bad,
  no_agent: styles.bad,
};

/** A director's, a pool's or a pool-on-a-director's sync state as a coloured word. */
export function SyncState({ state }: { state: AnySyncState }) {
  return (
    <span className={`${styles.state} ${tones[state] ?? ""}`} data-testid="sync-state" data-state={state}>
      {labels[state] ?? state}
    </span>
  );
}
