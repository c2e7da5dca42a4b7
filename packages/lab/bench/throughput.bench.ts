/**
 * Throughput through the glb lab (root; informational: veths and af_packet are not NICs, and the
 * two directors share the machine's CPUs with everything else). Prints connections/s and Gbit/s
 * for uploads (through the directors) and downloads (direct server return), plus the directors'
 * packet counts for the upload.
 *
 *   npm run -w @tide/lab bench
 */
import { fileURLToPath } from "node:url";
import { down, up } from "../src/lab-lifecycle";

const SCRIPT = fileURLToPath(new URL("../assets/throughput.py", import.meta.url));

async function main() {
  if (process.getuid?.() !== 0) throw new Error("the lab bench needs root");
  const lab = await up({ fresh: true, redirect: true });
  try {
    const before = await lab.directorTotals();
    const { stdout } = await lab.exec("client", ["/usr/bin/python3", SCRIPT, lab.vip, "5", "4", "64"], {
      timeoutMs: 300_000,
    });
    const after = await lab.directorTotals();
    const result = JSON.parse(stdout) as Record<string, number>;
    let packets = 0;
    let bytes = 0;
    for (const d of lab.directors) {
      packets += after[d]!.forwarded_packets - before[d]!.forwarded_packets;
      bytes += after[d]!.forwarded_bytes - before[d]!.forwarded_bytes;
    }
    console.log("glb lab throughput (client -> router ECMP -> 2 directors -> 3 proxies, DSR back)");
    console.log(`  new connections (GET / and close, 8 threads): ${result.connections_per_s}/s`);
    console.log(
      `  upload through the directors:  ${result.upload_gbit_s} Gbit/s (${result.streams} x ${result.mbytes_per_stream} MB)`,
    );
    console.log(`  download, direct server return: ${result.download_gbit_s} Gbit/s`);
    console.log(`  directors forwarded ${packets} packets, ${(bytes / 1e6).toFixed(1)} MB of GUE in all`);
  } finally {
    lab.close();
    await down();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
