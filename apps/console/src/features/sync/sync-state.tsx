import type { DirectorPoolSyncState, DirectorSyncState } from "@tide/contracts";
import styles from "./sync.module.css";

const poolLabels: Record<DirectorPoolSyncState, string> = {
  in_sync: "in sync",
  behind: "behind",
  not_served: "not served",
  silent: "silent",
  no_table: "no table yet",
};

const directorLabels: Record<DirectorSyncState, string> = {
  in_sync: "in sync",
  out_of_sync: "out of sync",
  silent: "silent",
  no_agent: "no agent",
  idle: "no pools",
};

const tone = (state: string) =>
  state === "in_sync" || state === "idle" || state === "no_table"
    ? styles.good
    : state === "silent" || state === "no_agent"
      ? styles.bad
      : styles.warn;

/** A director's or a pool's sync state as a coloured word (the state itself is the test id's value). */
export function SyncState({ state }: { state: DirectorPoolSyncState | DirectorSyncState }) {
  const label =
    (poolLabels as Record<string, string>)[state] ??
    (directorLabels as Record<string, string>)[state] ??
    state;
  return (
    <span className={`${styles.state} ${tone(state)}`} data-testid="sync-state" data-state={state}>
      {label}
    </span>
  );
}
