import type { Metadata } from "next";
import type { ReactNode } from "react";
import { TRPCReactProvider } from "~/trpc/react";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Tide", template: "%s · Tide" },
  description: "Fleet operations for GLB-style stateless L4 load balancing",
  // As next.config.ts's Referrer-Policy header: no-referrer made the console's forms post `Origin: null`.
  referrer: "strict-origin-when-cross-origin",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TRPCReactProvider>{children}</TRPCReactProvider>
      </body>
    </html>
  );
}
