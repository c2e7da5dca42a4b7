/** An address with an optional port, as an operator types it. */
export interface Endpoint {
  address: string;
  port: number | undefined;
}

/**
 * "10.1.2.3", "10.1.2.3:45678", "2001:db8::1", "[2001:db8::1]:443" -> address and port.
 * Returns a message when the text is not one of these (the server validates the address itself).
 */
export function parseEndpoint(text: string): Endpoint | string {
  const t = text.trim();
  if (t === "") return "Enter an address.";
  let address = t;
  let portText: string | undefined;
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(t);
  if (bracketed) {
    address = bracketed[1] ?? "";
    portText = bracketed[2];
  } else if (/^[0-9.]+:\d+$/.test(t)) {
    const i = t.lastIndexOf(":");
    address = t.slice(0, i);
    portText = t.slice(i + 1);
  } else if (!/^[0-9.]+$/.test(t) && !/^[0-9a-fA-F:.]+$/.test(t)) {
    return `"${t}" is not an IPv4 or IPv6 address (use [v6]:port for a port).`;
  }
  if (portText === undefined) return { address, port: undefined };
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return `Port ${portText} is not 0..65535.`;
  return { address, port };
}
