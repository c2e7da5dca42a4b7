"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useFleetLive } from "~/features/fleet/use-fleet-live";
import { useHasScope } from "~/features/session/session-context";
import styles from "./app-header.module.css";

interface NavItem {
  href: string;
  label: string;
  /** The section is active for these path prefixes. */
  match: (path: string) => boolean;
}

const items: NavItem[] = [
  { href: "/", label: "Fleet", match: (p) => p === "/" || p.startsWith("/pools") },
  { href: "/directors", label: "Directors", match: (p) => p.startsWith("/directors") },
  { href: "/hosts", label: "Hosts", match: (p) => p.startsWith("/hosts") },
  { href: "/findings", label: "Findings", match: (p) => p.startsWith("/findings") },
  { href: "/audit", label: "Audit", match: (p) => p.startsWith("/audit") },
];

/** Admin-only settings pages: links for admins, greyed out with the reason for everyone else. */
const adminItems: NavItem[] = [
  { href: "/settings/tokens", label: "Tokens", match: (p) => p.startsWith("/settings/tokens") },
  { href: "/settings/users", label: "Users", match: (p) => p.startsWith("/settings/users") },
];

function NavLink({ item, path, badge }: { item: NavItem; path: string; badge?: React.ReactNode }) {
  const active = item.match(path);
  return (
    <Link
      href={item.href}
      className={`${styles.link} ${active ? styles.active : ""}`}
      aria-current={active ? "page" : undefined}
    >
      {item.label}
      {badge}
    </Link>
  );
}

/** The fleet's open findings next to "Findings", coloured by the worst. */
function FindingsBadge() {
  const live = useFleetLive();
  const f = live.data?.findings;
  if (!f) return null;
  const n = f.critical + f.warn + f.info;
  if (n === 0) return null;
  const worst = f.critical > 0 ? "critical" : f.warn > 0 ? "warn" : "info";
  return (
    <span
      className={`${styles.badge} ${styles[worst]}`}
      data-testid="findings-count"
      data-worst={worst}
      title={`${f.critical} critical, ${f.warn} warn, ${f.info} info open`}
    >
      {n}
    </span>
  );
}

export function NavLinks() {
  const path = usePathname();
  const isAdmin = useHasScope("admin");
  return (
    <nav className={styles.nav} aria-label="Main">
      {items.map((item) => (
        <NavLink
          key={item.href}
          item={item}
          path={path}
          badge={item.href === "/findings" ? <FindingsBadge /> : undefined}
        />
      ))}
      {adminItems.map((item) =>
        isAdmin ? (
          <NavLink key={item.href} item={item} path={path} />
        ) : (
          <span key={item.href} className={styles.disabled} title="requires admin scope" aria-disabled="true">
            {item.label}
          </span>
        ),
      )}
      <Link className={styles.link} href="/docs">
        API docs
      </Link>
    </nav>
  );
}
