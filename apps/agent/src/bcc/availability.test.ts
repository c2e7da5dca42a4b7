import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkBccTool } from "./availability";

const RELEASE = "6.18.0-test";
let roots: string[] = [];
afterEach(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
  roots = [];
});

function tree(files: string[]): string {
  const root = mkdtempSync(path.join(tmpdir(), "tide-bcc-"));
  roots.push(root);
  for (const f of files) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), "");
  }
  return root;
}

describe("bcc availability", () => {
  it("is off when the tools are not installed", () => {
    const check = checkBccTool("softirqs", { release: RELEASE, root: tree([]) });
    expect(check).toMatchObject({ ok: false, tool: { state: "off", reason: "not_installed" } });
  });

  it("needs kernel headers to compile, from /lib/modules or kheaders", () => {
    const bare = tree(["/usr/sbin/softirqs-bpfcc"]);
    expect(checkBccTool("softirqs", { release: RELEASE, root: bare })).toMatchObject({
      ok: false,
      tool: { reason: "kernel_headers_missing" },
    });
    const kheaders = tree(["/usr/sbin/softirqs-bpfcc", "/sys/kernel/kheaders.tar.xz"]);
    expect(checkBccTool("softirqs", { release: RELEASE, root: kheaders })).toEqual({
      ok: true,
      binary: "/usr/sbin/softirqs-bpfcc",
    });
  });

  it("runs tcpconnlat only with kprobes; softirqs needs tracepoints only", () => {
    const files = [
      "/usr/share/bcc/tools/tcpconnlat",
      "/usr/share/bcc/tools/softirqs",
      `/lib/modules/${RELEASE}/build/Makefile`,
    ];
    const noKprobes = tree(files);
    expect(checkBccTool("tcpconnlat", { release: RELEASE, root: noKprobes })).toMatchObject({
      ok: false,
      tool: { reason: "kprobes_unavailable" },
    });
    expect(checkBccTool("softirqs", { release: RELEASE, root: noKprobes })).toMatchObject({ ok: true });
    const withKprobes = tree([...files, "/sys/kernel/tracing/kprobe_events"]);
    expect(checkBccTool("tcpconnlat", { release: RELEASE, root: withKprobes })).toEqual({
      ok: true,
      binary: "/usr/share/bcc/tools/tcpconnlat",
    });
  });
});
