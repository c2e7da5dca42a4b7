import { describe, expect, it } from "vitest";
import { parseSeedEnv } from "./env";

const base = { DATABASE_URL: "postgresql://tide@127.0.0.1:5432/tide", TIDE_ADMIN_EMAIL: "ops@example.net" };

describe("the seed's environment", () => {
  it("refuses a TIDE_ADMIN_PASSWORD the password policy refuses, naming the variable and why", () => {
    const refused: [string, string][] = [
      ["aaaaaaaaaaaa", "A password may not be one character or a short pattern repeated."],
      ["short", "A password needs at least 12 characters."],
      ["ops@example.net", "A password may not be the account's email address."],
      ["123456789012", "A password may not be a run of keys or letters (like 123456… or qwerty…)."],
      ["passwordpassword", "That password is one of the most common; choose another."],
      ["password1234", "That password is one of the most common; choose another."],
    ];
    for (const [password, why] of refused) {
      expect(() => parseSeedEnv({ ...base, TIDE_ADMIN_PASSWORD: password }), password).toThrow(
        `invalid environment for the seed:\n  TIDE_ADMIN_PASSWORD: ${why}`,
      );
    }
  });

  it("takes a password the policy takes, or none (one is generated)", () => {
    expect(parseSeedEnv({ ...base, TIDE_ADMIN_PASSWORD: "violet-kettle-harbour" }).TIDE_ADMIN_PASSWORD).toBe(
      "violet-kettle-harbour",
    );
    expect(parseSeedEnv(base).TIDE_ADMIN_PASSWORD).toBeUndefined();
  });
});
