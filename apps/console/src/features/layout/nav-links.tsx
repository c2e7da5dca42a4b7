"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
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
  { href: "/hosts", label: "Hosts", match: (p) => p.startsWith("/hosts") },
  { href: "/findings", label: "Findings", match: (p) => p.startsWith("/findings") },
  { href: "/audit", label: "Audit", match: (p) => p.startsWith("/audit") },
];

export function NavLinks() {
  const path = usePathname();
  const isAdmin = useHasScope("admin");
  return (
    <nav className={styles.nav} aria-label="Main">
      {items.map((item) => (
        <Link
          key={item.href}
          href={item.href}
          className={`${styles.link} ${item.match(path) ? styles.active : ""}`}
          aria-current={item.match(path) ? "page" : undefined}
        >
          {item.label}
        </Link>
      ))}
      {isAdmin ? (
        <Link
          href="/settings/tokens"
          className={`${styles.link} ${path.startsWith("/settings") ? styles.active : ""}`}
          aria-current={path.startsWith("/settings") ? "page" : undefined}
        >
          Tokens
        </Link>
      ) : (
        <span className={styles.disabled} title="requires admin scope" aria-disabled="true">
          Tokens
        </span>
      )}
      <a className={styles.link} href="/api/openapi.json" target="_blank" rel="noreferrer">
        API docs
      </a>
    </nav>
  );
}
