import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/** scrypt parameters: N=2^15, r=8, p=1 (~32 MiB, ~60 ms here): OWASP's minimum for scrypt. */
const N = 1 << 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;
const MAXMEM = 64 * 1024 * 1024;

function scryptAsync(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_LEN, { N: n, r, p, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [, n, r, p, salt, key] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(key, "base64url");
  const actual = await scryptAsync(password, Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A password for a new user or a reset: 18 random bytes -> 24 base64url characters (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}

/** A random secret for cookies and API tokens (256 bits, base64url). */
export function randomSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Sessions and API tokens are stored as sha256 digests: a database leak reveals no usable secret. */
export function digestSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}
