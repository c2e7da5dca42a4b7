import { describe, expect, it } from "vitest";
import { backendLook, DISTINCT_LOOKS, PROXY_PALETTE } from "./proxy-colors";

/** sRGB hex -> relative luminance (WCAG) and CIELAB (D65). */
function channel(hex: string, i: number): number {
  const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}
function luminance(hex: string): number {
  return 0.2126 * channel(hex, 0) + 0.7152 * channel(hex, 1) + 0.0722 * channel(hex, 2);
}
function lab(hex: string): [number, number, number] {
  const [r, g, b] = [channel(hex, 0), channel(hex, 1), channel(hex, 2)];
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047);
  const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}
const deltaE = (a: string, b: string) => {
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
};
const contrast = (a: string, b: string) => {
  const [x, y] = [luminance(a), luminance(b)].sort((m, n) => n - m) as [number, number];
  return (x + 0.05) / (y + 0.05);
};

describe("proxy colours", () => {
  it("gives 32 proxies 32 different looks", () => {
    const looks = Array.from({ length: 32 }, (_, i) => JSON.stringify(backendLook(i)));
    expect(new Set(looks).size).toBe(32);
    expect(DISTINCT_LOOKS).toBe(32);
  });

  it("never repeats a look or a near colour among neighbours, however many proxies", () => {
    for (let i = 0; i < 100; i++) {
      const [a, b] = [backendLook(i), backendLook(i + 1)];
      expect(JSON.stringify(a), `slots ${i} and ${i + 1}`).not.toBe(JSON.stringify(b));
      expect(deltaE(a.color, b.color), `slots ${i} and ${i + 1}`).toBeGreaterThanOrEqual(45);
    }
  });

  it("keeps any two palette colours apart and every one visible on both themes' panels", () => {
    PROXY_PALETTE.forEach((a, i) => {
      for (const b of PROXY_PALETTE.slice(i + 1)) expect(deltaE(a, b), `${a} vs ${b}`).toBeGreaterThan(30);
      // --bg-raised of the dark theme and of the light theme (globals.css).
      expect(contrast(a, "#151a21"), `${a} on dark`).toBeGreaterThanOrEqual(3);
      expect(contrast(a, "#ffffff"), `${a} on light`).toBeGreaterThanOrEqual(3);
    });
  });
});
