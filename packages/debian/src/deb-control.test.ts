import { describe, expect, it } from "vitest";
import { dependenciesOf } from "./deb-control";

describe("dependenciesOf", () => {
  it("lists Depends then Recommends, without versions, qualifiers, second choices or Tide's own", () => {
    const control = [
      "Package: tide-agent",
      "Version: 0.1.0+deb13",
      "Depends: nodejs (>= 18.19), libbpf1 (>= 1:1.1.0), libc6 (>= 2.34), libelf1t64 | libelf1, python3:any",
      "Recommends: iproute2, tide-director, iputils-tracepath",
      "Description: x",
    ].join("\n");
    expect(dependenciesOf(control)).toEqual([
      "nodejs",
      "libbpf1",
      "libc6",
      "libelf1t64",
      "python3",
      "iproute2",
      "iputils-tracepath",
    ]);
  });

  it("gives nothing for a package without dependencies, and names each package once", () => {
    expect(dependenciesOf("Package: a\nVersion: 1\n")).toEqual([]);
    expect(dependenciesOf("Depends: a, a (>= 2)\nRecommends: a\n")).toEqual(["a"]);
  });
});
