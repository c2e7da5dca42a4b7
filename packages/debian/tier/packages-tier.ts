/**
 * The `packages` test tier (npm test -- packages): Tide's Debian packages built and installed on
 * Debian machines that boot systemd, as an operator would install them.
 *   node --import tsx packages/debian/tier/packages-tier.ts
 *
 * As root on Linux: installs docker.io + debootstrap if missing and runs its own dockerd (the
 * compose tier's: no iptables, no bridge, the host left as it was), builds the packages for
 * Debian 13 and 12 (packages/debian/bin/build-packages: lintian must pass), then boots three
 * "machines", containers with systemd as PID 1 and no network but point-to-point veths between
 * them (made inside their own namespaces: nothing is added to the host's):
 *   console  Debian 13 + postgresql: tide-console installed, `tide-console setup-postgres`,
 *            `create-admin`, HTTPS with a certificate of a test CA made here;
 *   agent-13 Debian 13 and agent-12 Debian 12 (its own nodejs 18): tide-agent installed and
 *            enrolled with `tide-agent enroll https://console… --token …` (tokens made over REST),
 *            each live on the console within seconds; a wrong CA and a spent token refused plainly.
 * Then reload, purge (the agent's files go, the database stays) and the host check. Prints
 * package sizes, install times and the time from `enroll` to live.
 * Each machine's image has its packages' Debian dependencies installed beforehand (the machines
 * have no route to a mirror), so an install here is dpkg with its maintainer scripts, not apt's
 * downloads.
 */
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "@tide/devstack";
import { startOwnDockerd, type OwnDockerd } from "@tide/devstack/docker-engine";
import { diffHostState, snapshotHost } from "@tide/devstack/host-state";
import { dependenciesOf } from "../src/deb-control";

const PREFIX = "tide-pkgtier";
const CONSOLE_NAME = "console.tide.test";
const CONSOLE_PORT = 3443;
const BOOT_TIMEOUT_MS = 60_000;
const LIVE_TIMEOUT_MS = 60_000;
/** A host is live when its agent's last report is at most this old (the fleet page's rule). */
const LIVE_WITHIN_MS = 5_000;
const CGROUP_PARENT = "tide-compose-tier";

const log = (line: string) => process.stdout.write(`    ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}
const checks: Check[] = [];
const figures: string[] = [];

async function check(name: string, body: () => Promise<string | void>): Promise<boolean> {
  try {
    const detail = await body();
    checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
    log(`PASS ${name}${detail ? ` (${detail})` : ""}`);
    return true;
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    checks.push({ name, ok: false, detail });
    log(`FAIL ${name}: ${detail}`);
    return false;
  }
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

interface Run {
  status: number | null;
  out: string;
}

function runCmd(command: string, args: string[], options: SpawnSyncOptions = {}): Run {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  return { status: r.status, out: `${String(r.stdout ?? "")}${String(r.stderr ?? "")}` };
}

function sh(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const r = runCmd(command, args, options);
  if (r.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} exited with ${r.status}:\n${r.out.trim().split("\n").slice(-30).join("\n")}`,
    );
  }
  return r.out;
}

/** Tokens out of what the tier prints (the commands it runs carry enrollment tokens). */
function redactTokens(text: string): string {
  return text.replace(/tide_(enroll|host)_[A-Za-z0-9_-]+/g, "tide_$1_[redacted]");
}

/** One booted Debian machine: a container with systemd as PID 1. */
class Machine {
  constructor(
    readonly name: string,
    readonly suite: "trixie" | "bookworm",
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get container(): string {
    return `${PREFIX}-${this.name}`;
  }

  /** Runs a shell command inside; returns its exit status and output. */
  exec(script: string, options: { input?: string } = {}): Run {
    return runCmd("docker", ["exec", "-i", this.container, "bash", "-c", script], {
      env: this.env,
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
  }

  /** As exec, failing on a non-zero status. */
  ok(script: string, options: { input?: string } = {}): string {
    const r = this.exec(script, options);
    if (r.status !== 0) {
      throw new Error(
        redactTokens(
          `${this.name}: \`${script}\` exited with ${r.status}:\n${r.out.trim().split("\n").slice(-25).join("\n")}`,
        ),
      );
    }
    return r.out;
  }

  copyIn(from: string, to: string): void {
    sh("docker", ["cp", from, `${this.container}:${to}`], { env: this.env });
  }

  pid(): number {
    return Number(
      sh("docker", ["inspect", "-f", "{{.State.Pid}}", this.container], { env: this.env }).trim(),
    );
  }
}

function debsOf(suite: string): Map<string, string> {
  const dir = path.join(REPO_ROOT, ".tide/packages", suite);
  const debs = new Map<string, string>();
  for (const f of readdirSync(dir)) {
    const m = /^(tide-[a-z]+)_.*\.deb$/.exec(f);
    if (m) debs.set(m[1]!, path.join(dir, f));
  }
  return debs;
}

/**
 * "The previous build" of a package: the same files under a lower version (`~prev` sorts before
 * the version itself), repacked with dpkg-deb. Upgrading from it runs what an upgrade runs (the
 * maintainer scripts, conffile handling, the units' restarts) though no file differs.
 */
function previousBuild(deb: string, dir: string): string {
  const name = path.basename(deb).split("_")[0]!;
  const tree = mkdtempSync(path.join(dir, `${name}-`));
  sh("dpkg-deb", ["-R", deb, tree]);
  const control = path.join(tree, "DEBIAN/control");
  const text = readFileSync(control, "utf8");
  const version = /^Version: (.*)$/m.exec(text)?.[1];
  assert(version, `no Version in ${deb}`);
  writeFileSync(control, text.replace(/^Version: .*$/m, `Version: ${version}~prev`));
  const out = path.join(dir, `${name}_prev.deb`);
  sh("dpkg-deb", ["--root-owner-group", "-b", tree, out]);
  rmSync(tree, { recursive: true, force: true });
  return out;
}

/** The machine image of one suite: systemd, and every dependency of the packages it will install. */
function buildImage(
  env: NodeJS.ProcessEnv,
  suite: string,
  role: string,
  debs: string[],
  extra: string[],
): string {
  const tag = `${PREFIX}-${role}:${suite}`;
  const deps = new Set(extra);
  for (const deb of debs) for (const d of dependenciesOf(sh("dpkg-deb", ["-f", deb]))) deps.add(d);
  const dockerfile = [
    `FROM debian:${suite}-slim`,
    // The base image keeps services from starting while images build; a booted machine starts them.
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends " +
      `systemd systemd-sysv dbus curl ca-certificates openssl procps iproute2 ${[...deps].join(" ")} ` +
      "&& rm -rf /var/lib/apt/lists/* && rm -f /usr/sbin/policy-rc.d " +
      // A container has no consoles or udev to wait for.
      "&& systemctl mask systemd-udevd.service systemd-udev-trigger.service getty@tty1.service console-getty.service systemd-firstboot.service || true",
    "STOPSIGNAL SIGRTMIN+3",
    'CMD ["/sbin/init"]',
  ].join("\n");
  const started = Date.now();
  sh("docker", ["build", "-q", "--network", "host", "-t", tag, "-"], { env, input: dockerfile });
  log(`image ${tag} (${[...deps].join(", ")}) in ${seconds(Date.now() - started)}`);
  return tag;
}

async function boot(env: NodeJS.ProcessEnv, machine: Machine, image: string): Promise<void> {
  runCmd("docker", ["rm", "-f", machine.container], { env });
  sh(
    "docker",
    [
      "run",
      "-d",
      "--name",
      machine.container,
      "--hostname",
      machine.name,
      "--network",
      "none",
      // What systemd as PID 1 needs under cgroup v1 (named capabilities: --privileged fails where
      // the engine's own capability set lacks one), plus what the agent's probes and setns use.
      "--cap-add",
      "SYS_ADMIN",
      "--cap-add",
      "NET_ADMIN",
      "--cap-add",
      "SYS_PTRACE",
      "--cap-add",
      "NET_RAW",
      "--cap-add",
      "IPC_LOCK",
      "--cap-add",
      "DAC_READ_SEARCH",

      "--security-opt",
      "seccomp=unconfined",
      "--security-opt",
      "apparmor=unconfined",
      "-v",
      "/sys/fs/cgroup:/sys/fs/cgroup:rw",
      "--tmpfs",
      "/run",
      "--tmpfs",
      "/run/lock",
      "--tmpfs",
      "/tmp",
      image,
      "/sbin/init",
      // systemd 257 (Debian 13) boots on a cgroup v1 host only when told to.
      "systemd.unified_cgroup_hierarchy=0",
      "SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1",
    ],
    { env },
  );
  const started = Date.now();
  let state = "";
  while (Date.now() - started < BOOT_TIMEOUT_MS) {
    state = machine.exec("systemctl is-system-running").out.trim();
    if (state === "running" || state === "degraded") {
      log(`${machine.name} (${machine.suite}) booted in ${seconds(Date.now() - started)}: ${state}`);
      return;
    }
    await sleep(500);
  }
  throw new Error(`${machine.name} did not boot within ${BOOT_TIMEOUT_MS / 1000} s (systemd: ${state})`);
}

/** A point-to-point link between two machines, made inside their namespaces. */
function link(a: Machine, aAddr: string, b: Machine, bAddr: string, name: string): void {
  sh("ip", [
    "link",
    "add",
    name,
    "netns",
    String(a.pid()),
    "type",
    "veth",
    "peer",
    "name",
    "eth0",
    "netns",
    String(b.pid()),
  ]);
  a.ok(`ip link set ${name} up && ip addr add ${aAddr}/30 dev ${name} && ip link set lo up`);
  b.ok(`ip link set eth0 up && ip addr add ${bAddr}/30 dev eth0 && ip link set lo up`);
}

/** A CA and the console's certificate (names: console.tide.test, its link addresses, localhost). */
function makeCertificates(
  dir: string,
  ips: string[],
): { ca: string; cert: string; key: string; otherCa: string } {
  const o = (args: string[]) => sh("openssl", args, { cwd: dir });
  for (const name of ["ca", "other-ca"]) {
    o([
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=Tide test ${name}`,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
    ]);
  }
  const san = ["DNS:" + CONSOLE_NAME, "DNS:localhost", "IP:127.0.0.1", ...ips.map((ip) => `IP:${ip}`)].join(
    ",",
  );
  writeFileSync(path.join(dir, "ext.cnf"), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  o([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    `/CN=${CONSOLE_NAME}`,
    "-keyout",
    "console.key",
    "-out",
    "console.csr",
  ]);
  o([
    "x509",
    "-req",
    "-in",
    "console.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
    "-out",
    "console.crt",
  ]);
  return {
    ca: path.join(dir, "ca.pem"),
    cert: path.join(dir, "console.crt"),
    key: path.join(dir, "console.key"),
    otherCa: path.join(dir, "other-ca.pem"),
  };
}

interface Http {
  status: number;
  json: unknown;
}

/** A REST call to the console, made from the console machine itself (curl, verifying the CA). */
function api(
  console_: Machine,
  method: string,
  apiPath: string,
  auth: { token?: string; cookie?: string },
  body?: unknown,
): Http {
  const args = [
    "curl -sS --cacert /etc/tide/test-ca.pem -o /tmp/api-body -w '%{http_code}'",
    `-X ${method}`,
    `--resolve ${CONSOLE_NAME}:${CONSOLE_PORT}:127.0.0.1`,
    // Browsers and runbooks name the console; a sign-in post carries its origin.
    `-H 'origin: https://${CONSOLE_NAME}:${CONSOLE_PORT}'`,
  ];
  if (auth.token) args.push(`-H 'authorization: Bearer ${auth.token}'`);
  if (auth.cookie) args.push(`-H 'cookie: ${auth.cookie}'`);
  if (body !== undefined) args.push("-H 'content-type: application/json' --data-binary @-");
  args.push(`'https://${CONSOLE_NAME}:${CONSOLE_PORT}${apiPath}'`);
  const r = console_.exec(
    `${args.join(" ")}; echo; cat /tmp/api-body`,
    body !== undefined ? { input: JSON.stringify(body) } : {},
  );
  const [code, ...rest] = r.out.split("\n");
  const text = rest.join("\n");
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: Number(code), json };
}

async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => T | null | undefined | false,
): Promise<T> {
  const started = Date.now();
  let last: unknown = null;
  while (Date.now() - started < timeoutMs) {
    try {
      const v = probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(250);
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (${String(last)})` : ""}`);
}

interface HostRow {
  id: string;
  name: string;
  lastSeenAt: string | null;
}

function hostList(console_: Machine, token: string): HostRow[] {
  const res = api(console_, "GET", "/api/v1/hosts", { token });
  assert(res.status === 200 && Array.isArray(res.json), `GET /api/v1/hosts: HTTP ${res.status}`);
  return res.json as HostRow[];
}

function hostRow(console_: Machine, token: string, name: string): HostRow | undefined {
  return hostList(console_, token).find((h) => h.name === name);
}

async function runTier(engine: OwnDockerd): Promise<void> {
  const env = engine.env;
  await check("packages build for Debian 13 and 12, lintian-clean", async () => {
    const started = Date.now();
    sh("bash", ["packages/debian/bin/build-packages", "trixie", "bookworm"], {
      cwd: REPO_ROOT,
      env,
      stdio: "inherit",
    });
    figures.push(`build (both suites, JS included): ${seconds(Date.now() - started)}`);
    for (const suite of ["trixie", "bookworm"]) {
      const debs = debsOf(suite);
      assert(debs.size === 4, `${suite}: ${debs.size} packages, expected 4 (${[...debs.keys()].join(", ")})`);
      for (const [name, file] of debs)
        figures.push(`${suite} ${name}: ${Math.round(statSync(file).size / 1024)} KiB`);
    }
  });
  const trixie = debsOf("trixie");
  const bookworm = debsOf("bookworm");
  // The machines' base images (build-packages made the one it built in, at most).
  for (const suite of ["trixie", "bookworm"]) {
    sh("bash", ["packages/devstack/docker/base-image.sh", suite], { cwd: REPO_ROOT, env });
  }

  const consoleImage = buildImage(env, "trixie", "console", [trixie.get("tide-console")!], ["postgresql"]);
  const agent13Image = buildImage(
    env,
    "trixie",
    "agent",
    [trixie.get("tide-agent")!, trixie.get("tide-director")!, trixie.get("tide-redirect")!],
    // The DPDK plugins its af_packet port needs (dpdk recommends them; apt installs recommends).
    ["socat", "librte-net-af-packet25", "librte-mempool-ring25", "librte-bus-vdev25"],
  );
  const agent12Image = buildImage(env, "bookworm", "agent", [bookworm.get("tide-agent")!], []);

  const consoleM = new Machine("console", "trixie", env);
  const agents = [new Machine("agent-13", "trixie", env), new Machine("agent-12", "bookworm", env)];
  await boot(env, consoleM, consoleImage);
  await boot(env, agents[0]!, agent13Image);
  await boot(env, agents[1]!, agent12Image);
  const consoleIps = agents.map((_, i) => `10.231.${i + 1}.1`);
  agents.forEach((agent, i) => {
    link(consoleM, consoleIps[i]!, agent, `10.231.${i + 1}.2`, `to-${agent.name}`);
    agent.ok(`echo '${consoleIps[i]} ${CONSOLE_NAME}' >> /etc/hosts`);
  });

  const certDir = mkdtempSync("/tmp/tide-pkgtier-certs.");
  // The previous build of what is upgraded below: the console, and agent-13's agent, director and redirect.
  const previous = Object.fromEntries(
    ["tide-console", "tide-agent", "tide-director", "tide-redirect"].map((n) => [
      n,
      previousBuild(trixie.get(n)!, certDir),
    ]),
  ) as Record<string, string>;
  try {
    const certs = makeCertificates(certDir, consoleIps);
    consoleM.copyIn(certs.ca, "/etc/tide-test-ca.pem");
    consoleM.ok("mkdir -p /etc/tide && mv /etc/tide-test-ca.pem /etc/tide/test-ca.pem");
    for (const agent of agents) {
      agent.copyIn(certs.ca, "/root/console-ca.pem");
      agent.copyIn(certs.otherCa, "/root/other-ca.pem");
    }

    await check(
      "tide-console installs; setup-postgres, create-admin; serves HTTPS under systemd",
      async () => {
        // The previous build first: the upgrade check below installs this build over it.
        consoleM.copyIn(previous["tide-console"]!, "/root/");
        consoleM.copyIn(trixie.get("tide-console")!, "/root/");
        const started = Date.now();
        consoleM.ok("dpkg -i /root/tide-console_prev.deb");
        figures.push(`install tide-console (dpkg -i, Debian 13): ${seconds(Date.now() - started)}`);
        assert(consoleM.exec("id -u tide-console").status === 0, "no tide-console user");
        consoleM.ok("systemctl start postgresql && tide-console setup-postgres");
        consoleM.copyIn(certs.cert, "/etc/tide/console-tls.crt");
        consoleM.copyIn(certs.key, "/etc/tide/console-tls.key");
        consoleM.ok(
          "chown root:tide-console /etc/tide/console-tls.key && chmod 640 /etc/tide/console-tls.key && " +
            `printf 'TIDE_TLS_CERT_FILE=/etc/tide/console-tls.crt\\nTIDE_TLS_KEY_FILE=/etc/tide/console-tls.key\\nTIDE_CONSOLE_HOST=0.0.0.0\\nPORT=${CONSOLE_PORT}\\n' >> /etc/tide/console.env`,
        );
        const startedServe = Date.now();
        consoleM.ok("systemctl enable tide-console && systemctl restart tide-console");
        const health = await waitFor("console /api/health over HTTPS", 60_000, () => {
          const r = api(consoleM, "GET", "/api/health", {});
          return r.status === 200 ? r : null;
        });
        figures.push(
          `tide-console start to healthy (migrations included): ${seconds(Date.now() - startedServe)}`,
        );
        return `health ${JSON.stringify(health.json)}`;
      },
    );

    let token = "";
    await check(
      "first admin by create-admin; sign-in over HTTPS sets a Secure cookie; an API token",
      async () => {
        // The password alone on stdout (what it says about it goes to stderr).
        const out = consoleM.ok("tide-console create-admin admin@tide.test 2>/dev/null");
        const password = out.trim();
        assert(/^\S{12,}$/.test(password), `create-admin printed no password: ${out}`);
        const signIn = consoleM.ok(
          `curl -sS -D - -o /dev/null --cacert /etc/tide/test-ca.pem --resolve ${CONSOLE_NAME}:${CONSOLE_PORT}:127.0.0.1 ` +
            `-H 'origin: https://${CONSOLE_NAME}:${CONSOLE_PORT}' -H 'content-type: application/json' --data-binary @- ` +
            `https://${CONSOLE_NAME}:${CONSOLE_PORT}/api/auth/sign-in`,
          { input: JSON.stringify({ email: "admin@tide.test", password }) },
        );
        const cookieLine = signIn.split("\n").find((l) => /^set-cookie: tide_session=/i.test(l));
        assert(cookieLine, `no session cookie:\n${signIn}`);
        assert(/;\s*secure/i.test(cookieLine), `the session cookie is not Secure: ${cookieLine}`);
        const cookie = cookieLine.replace(/^set-cookie:\s*/i, "").split(";")[0]!;
        const created = api(
          consoleM,
          "POST",
          "/api/v1/tokens",
          { cookie },
          { name: "packages tier", scopes: ["read", "operate", "admin"] },
        );
        assert(
          created.status === 200,
          `POST /api/v1/tokens: HTTP ${created.status} ${JSON.stringify(created.json)}`,
        );
        token = (created.json as { token?: string }).token ?? "";
        assert(token.startsWith("tide_"), "no token in the reply");
      },
    );

    for (const agent of agents) {
      await check(
        `tide-agent installs on ${agent.name} and enrolls in one command; live within seconds`,
        async () => {
          // agent-13 gets the previous build, upgraded below; agent-12 this one.
          const deb = agent.suite === "trixie" ? previous["tide-agent"]! : bookworm.get("tide-agent")!;
          agent.copyIn(deb, "/root/");
          const started = Date.now();
          agent.ok(`dpkg -i /root/${path.basename(deb)}`);
          figures.push(`install tide-agent (dpkg -i, ${agent.suite}): ${seconds(Date.now() - started)}`);
          const nodeVersion = agent.ok("node --version").trim();
          const made = api(
            consoleM,
            "POST",
            "/api/v1/enrollment-tokens",
            { token },
            { hostname: agent.name, roles: ["host"] },
          );
          assert(
            made.status === 200,
            `POST /api/v1/enrollment-tokens: HTTP ${made.status} ${JSON.stringify(made.json)}`,
          );
          const { token: enrollToken, command } = made.json as { token: string; command: string };
          assert(command.includes(enrollToken), `the command does not carry the token: ${command}`);
          const url = `https://${CONSOLE_NAME}:${CONSOLE_PORT}`;
          // A console whose certificate the host cannot verify is refused, saying so.
          const untrusted = agent.exec(
            `tide-agent enroll ${url} --token ${enrollToken} --ca-file /root/other-ca.pem`,
          );
          assert(untrusted.status !== 0, "enroll trusted a certificate signed by another CA");
          assert(/certificate/i.test(untrusted.out), `no word of the certificate in: ${untrusted.out}`);
          assert(!untrusted.out.includes(enrollToken), "enroll printed the token");
          const enrollStarted = Date.now();
          const out = agent.ok(
            `tide-agent enroll ${url} --token ${enrollToken} --ca-file /root/console-ca.pem`,
          );
          assert(!out.includes(enrollToken), "enroll printed the token");
          const mode = agent.ok("stat -c %a /etc/tide/host-token").trim();
          assert(mode === "600", `host-token mode ${mode}`);
          assert(agent.ok("systemctl is-active tide-agent").trim() === "active", "tide-agent is not active");
          const live = await waitFor(`${agent.name} live on the console`, LIVE_TIMEOUT_MS, () => {
            const hosts = api(consoleM, "GET", "/api/v1/hosts", { token });
            const list = (
              Array.isArray(hosts.json) ? hosts.json : ((hosts.json as { hosts?: unknown[] })?.hosts ?? [])
            ) as {
              name?: string;
              hostname?: string;
              lastSeenAt?: string | null;
            }[];
            const row = list.find((h) => (h.name ?? h.hostname) === agent.name);
            return row?.lastSeenAt && Date.now() - Date.parse(row.lastSeenAt) < LIVE_WITHIN_MS ? row : null;
          });
          const toLive = Date.now() - enrollStarted;
          figures.push(`enroll to live (${agent.name}, Node ${nodeVersion}): ${seconds(toLive)}`);
          const again = agent.exec(
            `tide-agent enroll ${url} --token ${enrollToken} --ca-file /root/console-ca.pem --force --no-start`,
          );
          assert(again.status !== 0, "a spent enrollment token was accepted again");
          assert(/used|spent/i.test(again.out), `a spent token's refusal does not say so: ${again.out}`);
          return `Node ${nodeVersion}, live ${seconds(toLive)} after enroll, last seen ${live.lastSeenAt}`;
        },
      );
    }

    await check("systemctl reload tide-agent keeps the process and the unit active", async () => {
      const agent = agents[0]!;
      const pidBefore = agent.ok("systemctl show -p MainPID --value tide-agent").trim();
      agent.ok("systemctl reload tide-agent");
      await sleep(1_000);
      assert(agent.ok("systemctl is-active tide-agent").trim() === "active", "not active after reload");
      const pidAfter = agent.ok("systemctl show -p MainPID --value tide-agent").trim();
      assert(pidBefore === pidAfter, `MainPID ${pidBefore} -> ${pidAfter}`);
    });

    await check("the installed units verify; systemd-analyze security exposure", async () => {
      const details: string[] = [];
      for (const [m, unit] of [
        [consoleM, "tide-console"],
        [agents[0]!, "tide-agent"],
      ] as const) {
        const verify = m.exec(`systemd-analyze verify --man=no /lib/systemd/system/${unit}.service`);
        assert(
          verify.status === 0 && verify.out.trim() === "",
          `systemd-analyze verify ${unit}: ${verify.out}`,
        );
        const exposure = /Overall exposure level for \S+: ([\d.]+ \S+)/.exec(
          m.exec(`systemd-analyze security ${unit}.service`).out,
        )?.[1];
        details.push(`${unit} ${exposure ?? "?"}`);
      }
      figures.push(`systemd-analyze security: ${details.join(", ")}`);
      return details.join(", ");
    });

    await check("a host removed in the console is refused at once", async () => {
      const agent = agents[1]!;
      const hosts = api(consoleM, "GET", "/api/v1/hosts", { token });
      const list = (
        Array.isArray(hosts.json) ? hosts.json : ((hosts.json as { hosts?: unknown[] })?.hosts ?? [])
      ) as {
        id: string;
        name?: string;
        hostname?: string;
      }[];
      const row = list.find((h) => (h.name ?? h.hostname) === agent.name);
      assert(row, `${agent.name} is not listed`);
      const removed = api(consoleM, "DELETE", `/api/v1/hosts/${row.id}`, { token });
      assert(
        removed.status === 200,
        `DELETE /api/v1/hosts/${row.id}: HTTP ${removed.status} ${JSON.stringify(removed.json)}`,
      );
      await waitFor("the agent's token refused (its log says so)", 20_000, () =>
        /401|revoked|refused/i.test(agent.exec("journalctl -u tide-agent --no-pager -n 30").out),
      );
    });

    await check("tide-director and tide-redirect start under systemd (Type=notify) and reload", async () => {
      const m = agents[0]!;
      for (const name of ["tide-director", "tide-redirect"]) m.copyIn(previous[name]!, "/root/");
      const started = Date.now();
      m.ok("dpkg -i /root/tide-director_prev.deb /root/tide-redirect_prev.deb");
      figures.push(
        `install tide-director + tide-redirect (dpkg -i, trixie): ${seconds(Date.now() - started)}`,
      );
      for (const unit of ["tide-director", "tide-redirect"]) {
        const state = m
          .exec(`systemctl is-enabled ${unit}; systemctl is-active ${unit}`)
          .out.trim()
          .split("\n");
        assert(state[1] !== "active", `${unit} started on install`);
      }
      // A veth pair stands in for the NIC: the director's port is an af_packet vdev on dp0 (no
      // hugepages, no PCI), which needs what its unit's comment says to add with systemctl edit.
      m.ok(
        "ip link add dp0 type veth peer name dp1 && ip link set dp0 up && ip link set dp1 up && ip addr add 10.232.0.2/24 dev dp1",
      );
      m.ok(
        "mkdir -p /etc/systemd/system/tide-director.service.d && cat > /etc/systemd/system/tide-director.service.d/lab.conf <<'EOF'\n" +
          "[Service]\nExecStart=\n" +
          "ExecStart=/usr/sbin/tide-director --no-huge -m 256 --no-pci -l 0 --file-prefix=tide --vdev=net_af_packet0,iface=dp0 -- --config /etc/tide/director.json\n" +
          "CapabilityBoundingSet=CAP_IPC_LOCK CAP_NET_RAW CAP_NET_ADMIN\nAmbientCapabilities=CAP_IPC_LOCK CAP_NET_RAW CAP_NET_ADMIN\n" +
          "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_PACKET\nEOF\n" +
          // Docker 20.10 cannot grant a container CAP_BPF (it predates it), so the machine's
          // systemd cannot give tide-redirect that capability: CAP_SYS_ADMIN, which the kernel
          // accepts for bpf() too, stands in for it here.
          "mkdir -p /etc/systemd/system/tide-redirect.service.d && printf '[Service]\\nCapabilityBoundingSet=CAP_BPF CAP_NET_ADMIN CAP_SYS_ADMIN\\nAmbientCapabilities=CAP_BPF CAP_NET_ADMIN CAP_SYS_ADMIN\\n' > /etc/systemd/system/tide-redirect.service.d/container.conf && " +
          "sed -i 's/^TIDE_REDIRECT_IFACE=.*/TIDE_REDIRECT_IFACE=dp1/' /etc/tide/redirect.conf && systemctl daemon-reload",
      );
      const details: string[] = [];
      for (const unit of ["tide-director", "tide-redirect"]) {
        const t0 = Date.now();
        const start = m.exec(`systemctl start ${unit}`);
        assert(
          start.status === 0,
          `systemctl start ${unit}: ${start.out}\n${m.exec(`journalctl -u ${unit} --no-pager -n 40`).out}`,
        );
        details.push(`${unit} ready in ${seconds(Date.now() - t0)}`);
        const sock = unit === "tide-director" ? "director" : "redirect";
        m.ok(`test -S /run/tide/${sock}.sock`);
      }
      const pid = m.ok("systemctl show -p MainPID --value tide-director").trim();
      m.ok("systemctl reload tide-director");
      assert(
        m.ok("systemctl is-active tide-director").trim() === "active",
        "tide-director not active after reload",
      );
      assert(
        m.ok("systemctl show -p MainPID --value tide-director").trim() === pid,
        "reload replaced the director's process",
      );
      const status = m.ok(
        `printf '{"cmd":"status"}\\n' | timeout 5 socat - UNIX-CONNECT:/run/tide/director.sock`,
      );
      assert(/"ok"\s*:\s*true/.test(status), `director status over its socket: ${status}`);
      return details.join(", ");
    });

    await check(
      "upgrades from the previous build keep configuration and data, restart what must",
      async () => {
        const m = agents[0]!;
        const pidOf = (machine: Machine, unit: string) =>
          machine.ok(`systemctl show -p MainPID --value ${unit}`).trim();
        const digest =
          "sha256sum /etc/tide/agent.json /etc/tide/host-token /etc/tide/director.json /etc/tide/redirect.conf";
        const filesBefore = m.ok(digest);
        const [agentPid, directorPid, redirectPid] = ["tide-agent", "tide-director", "tide-redirect"].map(
          (u) => pidOf(m, u),
        );
        // The agent first: its director keeps forwarding (same process, its socket answering).
        for (const name of ["tide-agent", "tide-director", "tide-redirect"])
          m.copyIn(trixie.get(name)!, "/root/");
        const started = Date.now();
        m.ok("dpkg -i /root/tide-agent_*+deb13_amd64.deb");
        figures.push(`upgrade tide-agent (dpkg -i): ${seconds(Date.now() - started)}`);
        assert(
          m.ok("systemctl is-active tide-agent").trim() === "active",
          "tide-agent not active after its upgrade",
        );
        assert(pidOf(m, "tide-agent") !== agentPid, "tide-agent was not restarted by its upgrade");
        assert(pidOf(m, "tide-director") === directorPid, "the agent's upgrade restarted the director");
        const status = m.ok(
          `printf '{"cmd":"status"}\\n' | timeout 5 socat - UNIX-CONNECT:/run/tide/director.sock`,
        );
        assert(/"ok"\s*:\s*true/.test(status), `director status during the agent's upgrade: ${status}`);
        // The data plane: upgraded on disk, never stopped; the operator restarts it when drained.
        const dp = m.ok(
          "dpkg -i /root/tide-director_*+deb13_amd64.deb /root/tide-redirect_*+deb13_amd64.deb",
        );
        assert(pidOf(m, "tide-director") === directorPid, "the director's upgrade restarted it");
        assert(pidOf(m, "tide-redirect") === redirectPid, "tide-redirect's upgrade restarted it");
        assert(
          /restart it when this host is drained/.test(dp),
          `no word to restart the director later:\n${dp}`,
        );
        assert(m.ok(digest) === filesBefore, "the upgrade changed the configuration or the host token");
        const versions = m.ok("dpkg-query -W -f '${Version} ' tide-agent tide-director tide-redirect").trim();
        assert(!versions.includes("~prev"), `still the previous build: ${versions}`);
        await waitFor("agent-13 live again after its upgrade", LIVE_TIMEOUT_MS, () => {
          const row = hostRow(consoleM, token, m.name);
          return row?.lastSeenAt && Date.now() - Date.parse(row.lastSeenAt) < LIVE_WITHIN_MS ? row : null;
        });
        // The console: restarted by its upgrade, migrating first; the data and the API token stay.
        const hostsBefore = hostList(consoleM, token).length;
        const consolePid = pidOf(consoleM, "tide-console");
        consoleM.ok("dpkg -i /root/tide-console_*+deb13_all.deb");
        assert(
          pidOf(consoleM, "tide-console") !== consolePid,
          "tide-console was not restarted by its upgrade",
        );
        await waitFor(
          "the console healthy after its upgrade",
          60_000,
          () => api(consoleM, "GET", "/api/health", {}).status === 200,
        );
        assert(hostList(consoleM, token).length === hostsBefore, "the console's upgrade lost hosts");
        const env = consoleM.ok("grep -c '^DATABASE_URL=' /etc/tide/console.env").trim();
        assert(env === "1", "console.env lost its DATABASE_URL");
        // Now stop the data plane as an operator would (the tc filter goes with tide-redirect).
        for (const unit of ["tide-redirect", "tide-director"]) m.ok(`systemctl stop ${unit}`);
        const tcLeft = m.exec("tc filter show dev dp1 ingress").out.trim();
        assert(tcLeft === "", `tide-redirect left a tc filter on dp1: ${tcLeft}`);
        m.ok("ip link del dp0");
        return versions;
      },
    );

    await check("apt purge removes what the packages made, not the database", async () => {
      const agent = agents[0]!;
      agent.ok("DEBIAN_FRONTEND=noninteractive apt-get purge -y tide-agent");
      const left = agent
        .exec("ls -d /etc/tide/agent.json /etc/tide/host-token /var/lib/tide-agent /usr/lib/tide 2>/dev/null")
        .out.trim();
      assert(left === "", `left after purge: ${left}`);
      consoleM.ok("DEBIAN_FRONTEND=noninteractive apt-get purge -y tide-console");
      const leftConsole = consoleM
        .exec("ls -d /etc/tide/console.env /var/lib/tide-console /usr/lib/tide/console 2>/dev/null")
        .out.trim();
      assert(leftConsole === "", `left after purge: ${leftConsole}`);
      const dbs = consoleM.ok("runuser -u postgres -- psql -Atc 'select datname from pg_database'");
      assert(/^tide$/m.test(dbs), `the database is gone after purge: ${dbs}`);
    });
  } finally {
    rmSync(certDir, { recursive: true, force: true });
  }
}

/**
 * The lab's fleet on the packages' own binaries: tide-director, tide-redirect, the agent bundle and
 * its helpers extracted from this machine's suite's .debs (the lab starts them in its namespaces as
 * a host's units would), then the console-fleet lab test: registration, sync, traffic, and a drain
 * over REST while established streams keep echoing (no stream may see an error).
 */
async function labOnPackages(): Promise<void> {
  const suite = sh("bash", ["-c", ". /etc/os-release && echo $VERSION_CODENAME"]).trim();
  await check(
    `the lab's fleet runs on the ${suite} packages' binaries: a drain with traffic flowing, 0 errors`,
    async () => {
      const debs = debsOf(suite);
      const root = mkdtempSync("/tmp/tide-pkgtier-root.");
      try {
        for (const name of ["tide-director", "tide-redirect", "tide-agent"])
          sh("dpkg-deb", ["-x", debs.get(name)!, root]);
        const r = runCmd(
          "npx",
          ["vitest", "run", "--project", "lab", "packages/lab/src/console-fleet.lab-test.ts"],
          {
            cwd: REPO_ROOT,
            stdio: "inherit",
            env: {
              ...process.env,
              TIDE_DIRECTOR_BIN: path.join(root, "usr/sbin/tide-director"),
              TIDE_REDIRECT_BIN: path.join(root, "usr/sbin/tide-redirect"),
              TIDE_AGENT_BUNDLE: path.join(root, "usr/lib/tide/agent/tide-agent.js"),
              TIDE_PROBES_BIN: path.join(root, "usr/lib/tide/tide-probes"),
              TIDE_NSDIAG_BIN: path.join(root, "usr/lib/tide/tide-nsdiag"),
              TIDE_HEALTHCHECK_BIN: path.join(root, "usr/lib/tide/tide-healthcheck"),
            },
          },
        );
        assert(
          r.status === 0,
          `the console-fleet lab test failed on the packaged binaries (exit ${r.status})`,
        );
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
}

/** cgroups systemd made inside the machines (docker removes only the containers' own). */
function removeCgroupsUnder(parent: string): void {
  for (const controller of readdirSafe("/sys/fs/cgroup")) {
    const root = path.join("/sys/fs/cgroup", controller, parent);
    if (!existsSync(root)) continue;
    const dirs: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSafe(d)) {
        const p = path.join(d, e);
        try {
          if (statSync(p).isDirectory()) walk(p);
        } catch {
          // gone meanwhile
        }
      }
      dirs.push(d);
    };
    walk(root);
    for (const d of dirs) {
      try {
        rmdirSync(d);
      } catch {
        // still in use or already gone
      }
    }
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  if (process.platform !== "linux" || process.getuid?.() !== 0) {
    throw new Error(
      "the packages tier needs root on Linux (it runs its own Docker engine and boots systemd machines)",
    );
  }
  sh("bash", ["-c", "source packages/devstack/bin/lib/install.sh && tide_install_docker"], {
    cwd: REPO_ROOT,
    stdio: "inherit",
  });
  const dataRoot = path.resolve(
    process.env.TIDE_COMPOSE_DOCKER_ROOT ?? path.join(REPO_ROOT, ".tide/compose-docker"),
  );
  const before = snapshotHost();
  const engine = await startOwnDockerd({ dataRoot, log });
  try {
    await runTier(engine);
  } catch (e) {
    checks.push({
      name: "the tier ran to the end",
      ok: false,
      detail: e instanceof Error ? e.message : String(e),
    });
    log(`FAIL ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    const names = runCmd("docker", ["ps", "-aq", "--filter", `name=${PREFIX}-`], { env: engine.env })
      .out.split("\n")
      .filter(Boolean);
    if (names.length) runCmd("docker", ["rm", "-f", ...names], { env: engine.env });
    removeCgroupsUnder(CGROUP_PARENT);
    await check("the engine stops and leaves no mount or temp dir", () => engine.stop());
  }
  if (checks[0]?.ok) await labOnPackages();
  await check("the host's iptables, bridges and sysctls are as before", async () => {
    const diff = diffHostState(before, snapshotHost());
    assert(diff.changed.length === 0, diff.changed.join("; "));
  });
  log("figures:");
  for (const f of figures) log(`  ${f}`);
  const failed = checks.filter((c) => !c.ok);
  for (const c of failed) log(`FAIL ${c.name}: ${c.detail}`);
  process.stdout.write(`${checks.length - failed.length} passed, ${failed.length} failed\n`);
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`packages tier: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
