import type { ProxyState } from "@tide/contracts";
import styles from "./state-badge.module.css";

export function StateBadge({ state }: { state: ProxyState }) {
  return (
    <span className={`${styles.badge} ${styles[state]}`} data-testid="state-badge" data-state={state}>
      {state}
    </span>
  );
}
