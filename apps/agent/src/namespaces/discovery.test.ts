import { describe, expect, it } from "vitest";
import { groupNamespaces, parseNetnsLink } from "./discovery";

describe("parseNetnsLink", () => {
  it("reads the inode of net:[N]", () => {
    expect(parseNetnsLink("net:[4026531840]")).toBe(4026531840);
    expect(parseNetnsLink("mnt:[4026531840]")).toBeNull();
  });
});

describe("groupNamespaces", () => {
  it("puts root first, then named, then unnamed; keeps pids; prefers the /run/netns path", () => {
    const ns = groupNamespaces({
      rootInode: 1,
      named: [
        { name: "web", inode: 5 },
        { name: "db", inode: 6 },
      ],
      processes: [
        { pid: 300, inode: 5 },
        { pid: 1, inode: 1 },
        { pid: 20, inode: 9 },
        { pid: 2, inode: 1 },
      ],
    });
    expect(ns).toEqual([
      { inode: 1, name: null, root: true, pids: [1, 2], path: "/proc/1/ns/net" },
      { inode: 6, name: "db", root: false, pids: [], path: "/run/netns/db" },
      { inode: 5, name: "web", root: false, pids: [300], path: "/run/netns/web" },
      { inode: 9, name: null, root: false, pids: [20], path: "/proc/20/ns/net" },
    ]);
  });

  it("keeps at most 64 pids per namespace", () => {
    const processes = Array.from({ length: 100 }, (_, i) => ({ pid: i + 1, inode: 7 }));
    expect(groupNamespaces({ rootInode: 7, named: [], processes })[0]!.pids).toHaveLength(64);
  });
});
