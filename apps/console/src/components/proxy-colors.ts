/**
 * A colour per backend (by slot in a table, by position in a list): neighbours get distant hues
 * (golden-angle steps), so adjacent proxies never look alike.
 */
export function backendColor(index: number): string {
  const hue = Math.round((index * 137.508 + 200) % 360);
  return `hsl(${hue} 65% 58%)`;
}
