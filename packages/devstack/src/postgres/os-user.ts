/**
 * Running PostgreSQL's binaries as the server user. PostgreSQL refuses to run as root, so as root
 * the server runs as the system user `tide` (created if missing); directories above a cluster home
 * that it cannot traverse get the search bit for that user only (an ACL when `setfacl` exists, else
 * o+x). Not as root, everything runs as the current user.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Debian's PostgreSQL 15 server binaries (package postgresql-15). */
export const PG_BIN_DIR = process.env.TIDE_PG_BIN_DIR ?? "/usr/lib/postgresql/15/bin";
/** System user that runs the server when we are root. */
export const SERVER_USER = "tide";

export type Log = (line: string) => void;

export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

export const isRoot = () => process.getuid?.() === 0;

export function lookupUser(name: string): OsUser | null {
  const uid = spawnSync("id", ["-u", name], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The user the server runs as: `tide` (created if missing) when we are root, else ourselves. */
export function serverUser(log: Log): OsUser {
  if (!isRoot()) {
    const me = os.userInfo();
    return { name: me.username, uid: me.uid, gid: me.gid };
  }
  let user = lookupUser(SERVER_USER);
  if (!user) {
    log(`creating system user ${SERVER_USER}`);
    const r = spawnSync(
      "useradd",
      [
        "--system",
        "--user-group",
        "--home-dir",
        "/nonexistent",
        "--no-create-home",
        "--shell",
        "/usr/sbin/nologin",
        SERVER_USER,
      ],
      { encoding: "utf8" },
    );
    if (r.status !== 0) throw new Error(`useradd ${SERVER_USER} failed: ${r.stderr.trim()}`);
    user = lookupUser(SERVER_USER);
    if (!user) throw new Error(`user ${SERVER_USER} still missing after useradd`);
  }
  return user;
}

/** Options that make a child run as `user` (libuv also drops root's supplementary groups). */
export function asUser(user: OsUser) {
  const env = { PATH: `${PG_BIN_DIR}:/usr/bin:/bin`, LANG: "C.UTF-8", LC_ALL: "C.UTF-8", TZ: "UTC" };
  return isRoot() ? { uid: user.uid, gid: user.gid, env, cwd: "/" } : { env, cwd: "/" };
}

/** Runs a PostgreSQL binary as the server user; rejects with its output on failure. */
export function runPg(user: OsUser, bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(PG_BIN_DIR, bin), args, {
      ...asUser(user),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${bin} ${args.join(" ")} exited with ${code}:\n${output.trim()}`));
    });
  });
}

export function chownToUser(file: string, user: OsUser) {
  if (isRoot()) fs.chownSync(file, user.uid, user.gid);
}

/** Makes sure `user` can traverse every directory down to `dir` (see the header comment). */
export function grantTraverse(dir: string, user: OsUser, log: Log) {
  if (!isRoot()) return;
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (const part of ["", ...parts]) {
    current = path.join(current, part);
    const probe = spawnSync("test", ["-x", current], { uid: user.uid, gid: user.gid });
    if (probe.status === 0) continue;
    const acl = spawnSync("setfacl", ["-m", `u:${user.name}:x`, current]);
    if (acl.status !== 0) fs.chmodSync(current, fs.statSync(current).mode | 0o001);
    log(`granted ${user.name} search permission on ${current} (${acl.status === 0 ? "ACL" : "o+x"})`);
  }
}
