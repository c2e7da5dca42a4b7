import { AddressError, parseEndpoint as parseAddressAndPort } from "@tide/forwarding/address";

/** An address with an optional port, as an operator types it. */
export interface Endpoint {
  address: string;
  port: number | undefined;
}

/**
 * "10.1.2.3", "10.1.2.3:45678", "2001:db8::1", "[2001:db8::1]:443" -> address and port, by
 * @tide/forwarding's parser (the one the table builder and tidectl use). Returns a plain message
 * when the text is not one of these.
 */
export function parseEndpoint(text: string): Endpoint | string {
  const t = text.trim();
  if (t === "") return "Enter an address.";
  try {
    const e = parseAddressAndPort(t);
    return { address: e.address, port: e.port };
  } catch (err) {
    if (err instanceof AddressError)
      return `"${t}" is not an IPv4 or IPv6 address with an optional port: ${err.message}.`;
    throw err;
  }
}
