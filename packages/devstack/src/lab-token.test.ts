import { describe, expect, it } from "vitest";
import { parseAdminCredentials, sessionFromSetCookie } from "./lab-token";

describe("the lab token's sign-in", () => {
  it("reads the seed's admin-credentials file", () => {
    expect(parseAdminCredentials("email=admin@tide.local\npassword=a=b c\n")).toEqual({
      email: "admin@tide.local",
      password: "a=b c",
    });
    expect(parseAdminCredentials("email=admin@tide.local\n")).toBeNull();
    expect(parseAdminCredentials("")).toBeNull();
  });

  it("finds the session cookie among Set-Cookie headers", () => {
    expect(
      sessionFromSetCookie(["other=1; Path=/", "tide_session=s3cr3t.v; Path=/; HttpOnly; SameSite=Lax"]),
    ).toBe("s3cr3t.v");
    expect(sessionFromSetCookie(["tide_session_x=1", "x=tide_session=2"])).toBeNull();
    expect(sessionFromSetCookie([])).toBeNull();
  });
});
