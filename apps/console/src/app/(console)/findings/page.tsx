import type { Metadata } from "next";
import { Suspense } from "react";
import { FindingsView } from "./findings-view";

export const metadata: Metadata = { title: "Findings" };

export default function FindingsPage() {
  return (
    <Suspense fallback={<p className="muted">Loading findings…</p>}>
      <FindingsView />
    </Suspense>
  );
}
