import { describe, expect, it } from "vitest";
import { passwordProblem } from "./password-policy";

const EMAIL = "Ada.Lovelace@Example.com";

describe("passwordProblem", () => {
  it.each([
    ["short", /at least 12/],
    ["elevenchars", /at least 12/],
    ["aaaaaaaaaaaaaaaa", /repeated/],
    ["            ", /at least 12|repeated/],
    ["abababababab", /repeated/],
    ["123123123123123", /repeated/],
    ["123456789012", /run of keys/],
    ["abcdefghijklmn", /run of keys/],
    ["QWERTYUIOP", /at least 12/],
    ["poiuytrewqpoi", /repeated|run of keys|common/],
    ["Password1234", /common/],
    ["correct horse battery staple", /common/],
    ["ada.lovelace@example.com", /email/],
    [" ADA.LOVELACE@EXAMPLE.COM ", /email/],
    ["ada.lovelace", /email/],
  ])("refuses %j", (password, why) => {
    expect(passwordProblem(password, EMAIL)).toMatch(why);
  });

  it.each(["violet-kettle-harbour", "x7Gm2qLp9vRt", "ada-likes-engines-1843"])("accepts %j", (password) => {
    expect(passwordProblem(password, EMAIL)).toBeNull();
  });
});
