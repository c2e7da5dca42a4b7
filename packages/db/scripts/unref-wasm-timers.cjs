// Preloaded into the Prisma CLI by scripts/prisma.sh (node --require).
// Prisma 6.19's Wasm schema engine arms 10 s / 60 s timers (pool/idle timeouts) that are never
// cleared, so the CLI would sit idle up to a minute after finishing. A timer whose creation stack
// contains a Wasm frame is unref'ed: it still fires while the CLI has work, but cannot hold the
// process open. Timers created by JavaScript are untouched.
"use strict";

const fromWasm = () => /wasm:\/\/|wasm-function/.test(new Error().stack ?? "");

for (const name of ["setTimeout", "setInterval"]) {
  const original = globalThis[name];
  const patched = function (...args) {
    const timer = original.apply(this, args);
    if (fromWasm()) timer.unref();
    return timer;
  };
  globalThis[name] = Object.assign(patched, original);
}
