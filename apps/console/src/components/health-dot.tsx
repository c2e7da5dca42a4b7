import styles from "./health-dot.module.css";

export function HealthDot({ healthy, reason }: { healthy: boolean; reason?: string }) {
  return (
    <span className={styles.health} title={reason} data-testid="health" data-healthy={healthy}>
      <span className={`${styles.dot} ${healthy ? styles.up : styles.down}`} aria-hidden="true" />
      <span className={`${styles.label} ${healthy ? "" : styles.downLabel}`}>
        {healthy ? "healthy" : "unhealthy"}
      </span>
    </span>
  );
}
