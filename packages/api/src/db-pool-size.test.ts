import { describe, expect, it } from "vitest";
import { poolSizeFor } from "./db";

describe("poolSizeFor: a console's pool fitted to PostgreSQL's connections", () => {
  it("keeps the configured size where the server has room for two consoles and more", () => {
    expect(poolSizeFor(10, 100, 3)).toBe(10); // PostgreSQL's defaults
    expect(poolSizeFor(20, 100, 3)).toBe(20);
  });

  it("takes at most a third of the ordinary connections, less its LISTEN connection", () => {
    expect(poolSizeFor(50, 100, 3)).toBe(31); // floor(97 / 3) - 1
    expect(poolSizeFor(10, 20, 3)).toBe(4); // floor(17 / 3) - 1
  });

  it("never goes under 2 connections, however small the server", () => {
    expect(poolSizeFor(10, 5, 3)).toBe(2);
    expect(poolSizeFor(10, 3, 3)).toBe(2);
  });
});
