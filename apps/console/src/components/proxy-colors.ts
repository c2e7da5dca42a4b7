/**
 * Colours for proxies (by slot in a table, by position in a list). Sixteen categorical colours,
 * chosen the Glasbey way (each one the farthest in CIELAB from those before it), from the sRGB
 * colours with at least 3:1 contrast against both the dark and the light theme's panels and a
 * chroma of 35 or more: any two differ by ΔE76 ≥ 31, neighbours (i, i+1) by ≥ 49. Slots 16-31
 * take the same colours striped, so up to 32 proxies each look different; past 32 the looks repeat
 * (never among neighbours) and the host name or slot beside each swatch tells them apart.
 */
export const PROXY_PALETTE = [
  "#4488dd",
  "#ff0000",
  "#009900",
  "#ee00ff",
  "#aa7744",
  "#dd1177",
  "#229988",
  "#0055ff",
  "#9944aa",
  "#bb3333",
  "#667700",
  "#dd6600",
  "#bb6688",
  "#ee00bb",
  "#007733",
  "#8822ff",
] as const;

/** Distinct looks before they repeat: each colour plain, then striped. */
export const DISTINCT_LOOKS = PROXY_PALETTE.length * 2;

export interface ProxyLook {
  color: string;
  striped: boolean;
}

export function backendLook(index: number): ProxyLook {
  const i = ((index % DISTINCT_LOOKS) + DISTINCT_LOOKS) % DISTINCT_LOOKS;
  return { color: PROXY_PALETTE[i % PROXY_PALETTE.length]!, striped: i >= PROXY_PALETTE.length };
}

/** The proxy's colour alone (charts and places that cannot draw stripes). */
export function backendColor(index: number): string {
  return backendLook(index).color;
}

/** A CSS background for a swatch: the colour, striped for slots 16-31 (mod 32). */
export function backendBackground(index: number): string {
  const { color, striped } = backendLook(index);
  return striped ? `repeating-linear-gradient(135deg, ${color} 0 2px, var(--bg-raised) 2px 4px)` : color;
}
