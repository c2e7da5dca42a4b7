import { describe, expect, it } from "vitest";
import { directApiRoute } from "./api-direct";

describe("directApiRoute: which requests tide-console serve answers without Next's router", () => {
  it("takes the REST and tRPC paths, with or without a query", () => {
    expect(directApiRoute("GET", "/api/v1/pools")).toBe("rest");
    expect(directApiRoute("GET", "/api/v1/me")).toBe("rest");
    expect(directApiRoute("GET", "/api/v1/pools/pool_abc123/proxies?state=active")).toBe("rest");
    expect(directApiRoute("GET", "/api/v1/agent/observations")).toBe("rest");
    expect(directApiRoute("GET", "/api/trpc/pools.list,fleet.overview?batch=1&input=%7B%7D")).toBe("trpc");
  });

  it("leaves Next's own routes and everything else to Next", () => {
    expect(directApiRoute("GET", "/api/v1/pools/pool_abc/tables/3/glbd")).toBeNull(); // the GLBD download route
    expect(directApiRoute("GET", "/api/health")).toBeNull();
    expect(directApiRoute("GET", "/api/live/hosts/host_1")).toBeNull();
    expect(directApiRoute("GET", "/api/openapi.json")).toBeNull();
    expect(directApiRoute("GET", "/api/auth/sign-in")).toBeNull();
    expect(directApiRoute("GET", "/pools")).toBeNull();
    expect(directApiRoute("GET", "/api/v1")).toBeNull();
    expect(directApiRoute("GET", "/api/v12/pools")).toBeNull();
  });

  it("takes only the methods the route files export; Next answers the others itself", () => {
    for (const m of ["POST", "PUT", "PATCH", "DELETE"])
      expect(directApiRoute(m, "/api/v1/pools")).toBe("rest");
    expect(directApiRoute("POST", "/api/trpc/pools.create")).toBe("trpc");
    expect(directApiRoute("PUT", "/api/trpc/pools.create")).toBeNull();
    expect(directApiRoute("OPTIONS", "/api/v1/pools")).toBeNull();
    expect(directApiRoute("HEAD", "/api/v1/pools")).toBeNull();
  });

  it("leaves paths Next would normalise or redirect to Next", () => {
    expect(directApiRoute("GET", "/api/v1/pools/")).toBeNull(); // trailing slash: Next redirects
    expect(directApiRoute("GET", "/api/v1//pools")).toBeNull();
    expect(directApiRoute("GET", "/api/v1/../health")).toBeNull();
    expect(directApiRoute("GET", "/api/v1/./pools")).toBeNull();
    expect(directApiRoute("GET", "/api/v1/pools/a b")).toBeNull();
    expect(directApiRoute("GET", "/api/v1/%2e%2e/health")).toBeNull(); // a ".." to the URL parser
    expect(directApiRoute("GET", "/api/v1/pools/%2E/x")).toBeNull();
    expect(directApiRoute("GET", "/api/v1/pools/.hidden")).toBeNull();
  });
});
