import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { TideError } from "@tide/contracts";

/** scrypt parameters: N=2^15, r=8, p=1 (~32 MiB, ~60 ms here): OWASP's minimum for scrypt. */
const N = 1 << 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;
const MAXMEM = 64 * 1024 * 1024;

/**
 * scrypt runs on libuv's thread pool (4 threads by default), which file reads, DNS and zlib share.
 * At most HASH_CONCURRENCY hashes run at once so a sign-in flood leaves the rest of the pool (and
 * ~32 MiB per hash of memory) to other requests; 2 x ~60 ms = about 30 sign-ins a second.
 */
export const HASH_CONCURRENCY = 2;
/** Unauthenticated callers (sign-in) queued beyond this are refused at once with 429. */
export const SIGN_IN_QUEUE_LIMIT = 16;

/** A counting semaphore: FIFO waiters, optional limit on how many may wait. */
export class HashGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly concurrency: number) {}

  get queued(): number {
    return this.waiting.length;
  }

  /** Run `work` when a slot is free; with `queueLimit`, refuse (429) instead of queueing past it. */
  async run<T>(work: () => Promise<T>, queueLimit?: number): Promise<T> {
    if (this.running >= this.concurrency) {
      if (queueLimit !== undefined && this.waiting.length >= queueLimit) {
        throw new TideError("rate_limited", "The console is busy checking passwords; retry in a second.", {
          retryAfterS: 1,
        });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next)
        next(); // the slot passes straight to the next waiter
      else this.running -= 1;
    }
  }
}

export const hashGate = new HashGate(HASH_CONCURRENCY);

function scryptAsync(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_LEN, { N: n, r, p, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await hashGate.run(() => scryptAsync(password, salt, N, R, P));
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/**
 * Check a password against a stored hash. `queueLimit` is for unauthenticated callers: past it the
 * check is refused (429) rather than queued.
 */
export async function verifyPassword(
  password: string,
  stored: string,
  opts: { queueLimit?: number } = {},
): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [, n, r, p, salt, key] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(key, "base64url");
  const actual = await hashGate.run(
    () => scryptAsync(password, Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p)),
    opts.queueLimit,
  );
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
