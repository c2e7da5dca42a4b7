import type { Metadata } from "next";
import { NewPoolView } from "~/features/pool-admin/new-pool-view";

export const metadata: Metadata = { title: "New pool" };

export default function NewPoolPage() {
  return <NewPoolView />;
}
