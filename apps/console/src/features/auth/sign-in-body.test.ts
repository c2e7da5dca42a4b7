import { describe, expect, it } from "vitest";
import { readSignInBody, SIGN_IN_BODY_LIMIT } from "./sign-in-body";

describe("readSignInBody", () => {
  const post = (body: BodyInit, type: string, headers: Record<string, string> = {}) =>
    new Request("http://console.example/api/auth/sign-in", {
      method: "POST",
      body,
      headers: { "content-type": type, ...headers },
    });

  it("reads a form post and a JSON post", async () => {
    const form = new URLSearchParams({ email: "a@b.example", password: "pw", next: "/pools" }).toString();
    expect(await readSignInBody(post(form, "application/x-www-form-urlencoded"))).toEqual({
      isForm: true,
      body: { email: "a@b.example", password: "pw", next: "/pools" },
    });
    expect(await readSignInBody(post('{"email":"a@b.example","password":"pw"}', "application/json"))).toEqual(
      { isForm: false, body: { email: "a@b.example", password: "pw" } },
    );
    expect(await readSignInBody(post("{not json", "application/json"))).toEqual({
      isForm: false,
      body: null,
    });
  });

  it("refuses a body past the limit, declared or streamed, without reading it all", async () => {
    const huge = "x".repeat(SIGN_IN_BODY_LIMIT + 1);
    expect(await readSignInBody(post(huge, "application/json"))).toBe("too_large");
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(4096));
      },
    });
    const streamed = new Request("http://console.example/api/auth/sign-in", {
      method: "POST",
      body: endless,
      headers: { "content-type": "application/json" },
      duplex: "half",
    } as RequestInit);
    expect(await readSignInBody(streamed)).toBe("too_large");
    expect(pulled).toBeLessThan(10);
  });
});
