/**
 * tidectl entry point (bundled to dist/tidectl.js, CommonJS: scripts/build.mjs).
 * No top-level await: the bundle is CommonJS, which has none.
 */
import { writeSync } from "node:fs";
import { runCli } from "./cli";

/**
 * Writes to fd 1 or 2 with write(2). process.stdout/stderr build a stream on first use, ~5 ms of
 * CPU, a third of --help's budget over bare node (issue 28). Where the fd is non-blocking (EAGAIN:
 * a pipe its parent made so) the rest goes through the stream; once the reader has gone (EPIPE:
 * `tidectl table show t.bin | head -1`) output is dropped and the command still finishes.
 */
function fdWriter(fd: 1 | 2, stream: () => NodeJS.WriteStream): (text: string) => void {
  let readerGone = false;
  let viaStream = false;
  return (text) => {
    if (readerGone) return;
    if (viaStream) {
      stream().write(text);
      return;
    }
    let rest = Buffer.from(text, "utf8");
    while (rest.length > 0) {
      try {
        rest = rest.subarray(writeSync(fd, rest));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EAGAIN") {
          viaStream = true;
          stream().write(rest);
          return;
        }
        if (code === "EPIPE") {
          readerGone = true;
          return;
        }
        throw e;
      }
    }
  };
}

void runCli(process.argv.slice(2), {
  stdout: fdWriter(1, () => process.stdout),
  stderr: fdWriter(2, () => process.stderr),
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
