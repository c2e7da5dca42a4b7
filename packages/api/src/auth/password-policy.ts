import { MIN_PASSWORD_LENGTH, normalizeEmail } from "@tide/contracts";

/**
 * What a chosen password must be (generated ones are 24 random characters and pass by
 * construction). Length first (NIST SP 800-63B: a minimum length and a blocklist, no composition
 * rules), then a refusal of the passwords attackers try first.
 */

/**
 * The most common leaked passwords of 12 characters or more (shorter ones already fail the
 * length check), compared in lower case. A short list on purpose: it stops the first guesses of
 * an online attack, which the sign-in throttle then keeps slow.
 */
const COMMON_PASSWORDS = new Set([
  "123456789012",
  "1234567890123",
  "12345678901234",
  "123456123456",
  "123123123123",
  "111111111111",
  "000000000000",
  "qwertyuiop12",
  "qwertyuiop123",
  "qwertyuiopasdfgh",
  "qwertyuiopasdfghjkl",
  "1q2w3e4r5t6y",
  "1qaz2wsx3edc",
  "1qaz2wsx3edc4rfv",
  "zaq12wsxcde3",
  "asdfghjkl123",
  "passwordpassword",
  "password1234",
  "password12345",
  "password123456",
  "password123!",
  "passw0rd1234",
  "p@ssw0rd1234",
  "p@ssword1234",
  "iloveyou1234",
  "welcome12345",
  "welcome123456",
  "letmein12345",
  "changeme1234",
  "changeme123!",
  "administrator",
  "administrator1",
  "admin1234567",
  "adminadmin123",
  "superman1234",
  "football1234",
  "baseball1234",
  "princess1234",
  "sunshine1234",
  "monkey123456",
  "trustno11234",
  "abcdefghijkl",
  "abcdefghijklm",
  "abc123abc123",
  "abcd1234abcd",
  "aa12345678aa",
  "correcthorsebatterystaple",
  "correct horse battery staple",
]);

/** Sequences that "keyboard walk" and "counting" passwords are made of. */
const RUNS = ["0123456789", "abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "asdfghjkl", "zxcvbnm"];

/** Whether `s` repeats one short unit ("aaaa…", "abab…", "123123…"). */
function isRepetition(s: string): boolean {
  for (let unit = 1; unit <= 4 && unit * 2 <= s.length; unit++) {
    if (
      s ===
      s
        .slice(0, unit)
        .repeat(Math.ceil(s.length / unit))
        .slice(0, s.length)
    )
      return true;
  }
  return false;
}

/** Whether `s` is a slice of one of the runs, forwards or backwards, wrapping ("…7890123"). */
function isRun(s: string): boolean {
  const reversed = [...s].reverse().join("");
  return RUNS.some((run) => {
    const cycled = run.repeat(Math.ceil(s.length / run.length) + 1);
    return cycled.includes(s) || cycled.includes(reversed);
  });
}

/**
 * Why `password` may not be used, or null when it may. `email` is the account's: a password
 * that is the email, or its local part, is refused.
 */
export function passwordProblem(password: string, email: string): string | null {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    return `A password needs at least ${MIN_PASSWORD_LENGTH} characters.`;
  }
  const lower = password.toLowerCase();
  const compact = lower.replace(/\s+/g, "");
  const address = normalizeEmail(email);
  const local = address.split("@")[0] ?? "";
  if (compact === address || (local.length > 0 && (compact === local || compact.startsWith(address)))) {
    return "A password may not be the account's email address.";
  }
  if (new Set(compact).size <= 1 || isRepetition(compact)) {
    return "A password may not be one character or a short pattern repeated.";
  }
  if (isRun(compact)) return "A password may not be a run of keys or letters (like 123456… or qwerty…).";
  if (COMMON_PASSWORDS.has(lower) || COMMON_PASSWORDS.has(compact)) {
    return "That password is one of the most common; choose another.";
  }
  return null;
}
