import { describe, expect, it } from "vitest";
import { shortHost, shortHostNames } from "./short-host";

describe("shortHost", () => {
  it("keeps the first label", () => {
    expect(shortHost("proxy-api-03.dc1.example.net")).toBe("proxy-api-03");
    expect(shortHost("localhost")).toBe("localhost");
  });
});

describe("shortHostNames", () => {
  it("drops the domain every host shares", () => {
    const names = shortHostNames(["director-01.dc1.example.net", "director-02.dc1.example.net"]);
    expect([...names.values()]).toEqual(["director-01", "director-02"]);
  });

  it("keeps the labels that tell hosts apart, where the first labels are the same", () => {
    const names = shortHostNames(["director-01.dc1.example.net", "director-01.dc2.example.net"]);
    expect(names.get("director-01.dc1.example.net")).toBe("director-01.dc1");
    expect(names.get("director-01.dc2.example.net")).toBe("director-01.dc2");
  });

  it("shortens hosts of different domains to their first label when that tells them apart", () => {
    const names = shortHostNames([
      "director-01.dc1.example.net",
      "edge-07.lab",
      "director-02.dc1.example.net",
    ]);
    expect([...names.values()]).toEqual(["director-01", "edge-07", "director-02"]);
  });

  it("keeps a name whole when it is the start of another", () => {
    const names = shortHostNames(["web.example.net", "web.example.net.lab", "db.example.net"]);
    expect(names.get("web.example.net")).toBe("web.example.net");
    expect(names.get("web.example.net.lab")).toBe("web.example.net.lab");
    expect(names.get("db.example.net")).toBe("db");
  });

  it("leaves addresses whole", () => {
    const names = shortHostNames(["10.0.1.5", "10.0.2.5", "edge-01.example.net"]);
    expect([...names.values()]).toEqual(["10.0.1.5", "10.0.2.5", "edge-01"]);
    expect(shortHostNames(["2001:db8::1", "2001:db8::2"]).get("2001:db8::1")).toBe("2001:db8::1");
  });

  it("gives a single host its first label", () => {
    expect([...shortHostNames(["edge-01.dc1.example.net", "edge-01.dc1.example.net"])]).toEqual([
      ["edge-01.dc1.example.net", "edge-01"],
    ]);
  });
});
