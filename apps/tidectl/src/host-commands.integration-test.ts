/**
 * tidectl's host commands against the real REST handler (the one the console's /api/v1 route
 * calls, so POST /enroll and the console URL of the enroll command are as in production) and the
 * integration tier's throwaway PostgreSQL. No server, no port: tidectl's fetch goes in-process.
 */
import { newId } from "@tide/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./cli";
import { startTidectlHarness, type TidectlHarness } from "./testing/api-harness";

let h: TidectlHarness;
let readToken = "";
/** Names unique to this run, so the test owns its data whatever else the database holds. */
const tag = newId("host").slice(-6);
const hostname = `cli-${tag}.test`;

beforeAll(async () => {
  h = await startTidectlHarness(`host-${tag}`, { TIDE_URL: "http://tide.test:3000" });
  readToken = (await h.caller.tokens.create({ name: `tidectl-ro-${tag}`, scopes: ["read"] })).token;
});
afterAll(async () => {
  await h.close();
});

/** tidectl's fetch (and the host's): straight into the REST handler, with this database. */
const handler = (input: string, init: RequestInit) => h.fetch(input, init);
const tidectl = (...argv: string[]) => h.tidectl(...argv);

/** What `tide-agent enroll` does with the command's URL and token. */
async function enroll(url: string, enrollToken: string) {
  const res = await handler(`${url}/api/v1/enroll`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: enrollToken, agentVersion: "0.1.0", kernelRelease: null }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("tidectl host", () => {
  it("adds a host (token and command printed once), lists it once enrolled, and removes it", async () => {
    const added = await tidectl("host", "add", hostname, "--role", "proxy,director", "--expires", "30");
    expect(added.err).toBe("");
    expect(added.code).toBe(0);
    const command = /^ {2}(tide-agent enroll \S+ --token (tide_enroll_\S+))$/m.exec(added.out);
    expect(command, added.out).not.toBeNull();
    const [, line, enrollToken] = command!;
    expect(line).toBe(`tide-agent enroll http://tide.test:3000 --token ${enrollToken}`);
    expect(added.out).toMatch(
      new RegExp(
        `^enrollment token for ${hostname.replace(/\./g, "\\.")} \\(proxy, director\\), enr_\\w+, expires \\S+Z \\(in (29|30) min\\)\\.\\nIt is shown only this once\\.`,
      ),
    );

    const pending = await tidectl("host", "tokens");
    expect(pending.out).toMatch(
      new RegExp(`${hostname.replace(/\./g, "\\.")}\\s+proxy,director\\s+pending\\s`),
    );
    expect(pending.out).not.toContain(enrollToken!.slice(12));

    const enrolled = await enroll("http://tide.test:3000", enrollToken!);
    expect(enrolled.status).toBe(200);

    const listed = await tidectl("host", "list");
    expect(listed.err).toBe("");
    expect(listed.out).toMatch(
      new RegExp(
        `${hostname.replace(/\./g, "\\.")}\\s+proxy,director\\s+never \\(stale\\)\\s+0\\.1\\.0\\s+0\\s+host_\\w+\\n`,
      ),
    );
    const hosts = JSON.parse((await tidectl("host", "list", "--json")).out) as { name: string }[];
    expect(hosts.map((h) => h.name)).toContain(hostname);

    const removed = await tidectl("host", "remove", hostname);
    expect(removed.err).toBe("");
    expect(removed.out).toMatch(
      new RegExp(
        `^removed host ${hostname.replace(/\./g, "\\.")} \\(host_\\w+\\); 1 host token no longer works\\n$`,
      ),
    );
    const gone = await tidectl("host", "remove", hostname);
    expect(gone.code).toBe(1);
    expect(gone.err).toContain(`Host ${hostname} does not exist. (HTTP 404, not_found)`);
  });

  it("prints the API's reply with --json, and revokes a pending token by host name", async () => {
    const name = `cli-json-${tag}.test`;
    const added = await tidectl("host", "add", name, "--role", "proxy", "--json");
    expect(added.code).toBe(0);
    const reply = JSON.parse(added.out) as { token: string; command: string; summary: { id: string } };
    expect(reply.command).toBe(`tide-agent enroll http://tide.test:3000 --token ${reply.token}`);
    const revoked = await tidectl("host", "revoke", name);
    expect(revoked.err).toBe("");
    expect(revoked.out).toBe(`revoked enrollment token ${reply.summary.id} for ${name}\n`);
    const refused = await enroll("http://tide.test:3000", reply.token);
    expect(refused.status).toBe(401);
    expect(refused.body.message).toContain(`was revoked at`);
  });

  it("says what is wrong: no role, a bad role, a token without the admin scope", async () => {
    const noRole = await tidectl("host", "add", `x-${tag}`);
    expect(noRole.code).toBe(2);
    expect(noRole.err).toContain("--role is required");
    const badRole = await tidectl("host", "add", `x-${tag}`, "--role", "router");
    expect(badRole.code).toBe(1);
    expect(badRole.err).toContain(
      "(HTTP 400, bad_request)\n  roles[0]: must be one of director, proxy, host",
    );
    const badExpiry = await tidectl("host", "add", `x-${tag}`, "--role", "proxy", "--expires", "1h");
    expect(badExpiry.code).toBe(2);
    let err = "";
    const code = await runCli(["host", "add", `x-${tag}`, "--role", "proxy"], {
      stdout: () => undefined,
      stderr: (t) => void (err += t),
      cwd: process.cwd(),
      env: { TIDE_TOKEN: readToken, TIDE_URL: "http://tide.test:3000" },
      fetch: handler,
    });
    expect(code).toBe(1);
    expect(err).toContain("(HTTP 403, forbidden)");
  });
});
