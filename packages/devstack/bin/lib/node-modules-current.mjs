// Is node_modules what `npm ci` would install from package-lock.json? Exit 0 if so, else print why
// and exit 1. Compares the lockfile with npm's record of the installed tree
// (node_modules/.package-lock.json, rewritten by every npm install/ci). Dependency-free: it runs
// before node_modules exists.
import { readFileSync } from "node:fs";

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const stale = (why) => {
  console.log(why);
  process.exit(1);
};

const wanted = readJson("package-lock.json").packages ?? {};
let installed;
try {
  installed = readJson("node_modules/.package-lock.json").packages ?? {};
} catch {
  stale("node_modules is missing or was not installed by npm");
}

// An optional package for another OS/CPU/libc (turbo-darwin-arm64, a musl build) is rightly absent.
const libc = process.report.getReport().header.glibcVersionRuntime ? "glibc" : "musl";
const forThisPlatform = (entry) =>
  (!entry.os || entry.os.includes(process.platform)) &&
  (!entry.cpu || entry.cpu.includes(process.arch)) &&
  (!entry.libc || entry.libc.includes(libc));

for (const [key, entry] of Object.entries(wanted)) {
  if (!key.includes("node_modules/")) continue; // the root and workspace folders themselves
  const got = installed[key];
  if (!got) {
    if ((entry.optional || entry.devOptional) && !forThisPlatform(entry)) continue;
    if (entry.optional && !entry.os && !entry.cpu) continue; // optional and allowed to fail
    stale(`${key} is not installed`);
  }
  if (got.version !== entry.version)
    stale(`${key} is ${got.version}, package-lock.json wants ${entry.version}`);
}
for (const key of Object.keys(installed)) {
  if (!(key in wanted)) stale(`${key} is installed but not in package-lock.json`);
}
