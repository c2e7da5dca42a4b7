import { describe, expect, it } from "vitest";
import { ConsoleUrls } from "./console-urls";

describe("ConsoleUrls: which console the agent sends to", () => {
  it("starts with the first URL and stays on a console that answers", () => {
    const c = new ConsoleUrls(["http://a", "http://b"]);
    expect(c.current).toBe("http://a");
    c.answered();
    c.answered();
    expect(c.current).toBe("http://a");
    expect(c.backoffStep).toBe(0);
  });

  it("moves round-robin to the next URL when the current one is unreachable", () => {
    const c = new ConsoleUrls(["http://a", "http://b", "http://c"]);
    expect(c.unreachable()).toEqual({ from: "http://a", to: "http://b" });
    expect(c.unreachable()).toEqual({ from: "http://b", to: "http://c" });
    expect(c.unreachable()).toEqual({ from: "http://c", to: "http://a" });
    expect(c.current).toBe("http://a");
  });

  it("is sticky: once a console answers, the agent keeps it until it fails", () => {
    const c = new ConsoleUrls(["http://a", "http://b"]);
    c.unreachable();
    c.answered();
    expect(c.current).toBe("http://b");
    expect(c.backoffStep).toBe(0);
    c.answered();
    expect(c.current).toBe("http://b");
    expect(c.unreachable()).toEqual({ from: "http://b", to: "http://a" });
  });

  it("backs off one step per full cycle of the list", () => {
    const c = new ConsoleUrls(["http://a", "http://b"]);
    const steps: number[] = [];
    for (let i = 0; i < 6; i++) {
      c.unreachable();
      steps.push(c.backoffStep);
    }
    expect(steps).toEqual([1, 1, 2, 2, 3, 3]);
    c.answered();
    expect(c.backoffStep).toBe(0);
  });

  it("with one URL: never switches, one backoff step per attempt (as before)", () => {
    const c = new ConsoleUrls(["http://a"]);
    expect(c.unreachable()).toBeNull();
    expect(c.backoffStep).toBe(1);
    expect(c.unreachable()).toBeNull();
    expect(c.backoffStep).toBe(2);
    expect(c.current).toBe("http://a");
  });

  it("stays on the console after a refusal that is no outage (token), backing off a whole step", () => {
    const c = new ConsoleUrls(["http://a", "http://b", "http://c"]);
    c.refused();
    expect(c.current).toBe("http://a");
    expect(c.backoffStep).toBe(1);
    c.refused();
    expect(c.backoffStep).toBe(2);
    c.unreachable();
    expect(c.current).toBe("http://b");
    expect(c.backoffStep).toBe(3);
  });

  it("needs at least one URL", () => {
    expect(() => new ConsoleUrls([])).toThrow(/no console URL/);
  });
});
