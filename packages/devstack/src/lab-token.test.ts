import { describe, expect, it } from "vitest";
import { adminTokenVerdict, parseAdminCredentials, sessionFromSetCookie } from "./lab-token";

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

  it("replaces the token only when the console refused it, never when it is busy", () => {
    expect(adminTokenVerdict(200, { scopes: ["read", "operate", "admin"] })).toBe("admin");
    expect(adminTokenVerdict(200, { scopes: ["read"] })).toBe("not-admin");
    expect(adminTokenVerdict(401, null)).toBe("not-admin");
    expect(adminTokenVerdict(403, null)).toBe("not-admin");
    for (const busy of [429, 500, 502, 503, 504]) expect(adminTokenVerdict(busy, null)).toBe("unknown");
  });
});
