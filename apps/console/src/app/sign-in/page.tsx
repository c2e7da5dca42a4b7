import type { Metadata } from "next";
import { SignInForm } from "~/features/auth/sign-in-form";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string | string[]; error?: string | string[] }>;
}) {
  const { next, error } = await searchParams;
  return <SignInForm next={typeof next === "string" ? next : undefined} failed={error === "1"} />;
}
