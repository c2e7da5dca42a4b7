"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * A wide table's box: the table scrolls sideways inside it, never the page. While its content is
 * wider than the box (a phone), the box is a named region in the Tab order, so a keyboard user can
 * scroll it with the arrow keys (WCAG 2.1.1); when everything fits it is a plain box, no extra stop.
 */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [overflowing, setOverflowing] = useState(false);
  useEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () => setOverflowing(box.scrollWidth > box.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    if (box.firstElementChild) observer.observe(box.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div
      ref={ref}
      className="table-scroll"
      data-overflowing={overflowing}
      {...(overflowing ? { tabIndex: 0, role: "region", "aria-label": `${label} (scrolls sideways)` } : {})}
    >
      {children}
    </div>
  );
}
