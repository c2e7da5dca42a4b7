"""Benchmark: the director's per-packet cost, this build against a reference commit, in one run.

Two bench binaries (bench/bench.c): `current` (this tree) and `ref` (bench/bench.c and the
headers of a git commit, built with the same compiler and flags; `make bench` builds it from
BENCH_REF). The ns figures come from alternating runs, ref/current then current/ref, `--rounds`
times: a busy machine slows whichever binary runs at that moment, and alternating spreads that
over both. Each run already keeps the best of 5 passes per loop; reported is the median over the
rounds of that best, for both, and current / ref. Then instructions per packet, counted by
callgrind for each binary and mix (`added` = director loop - rx->tx loop, the same subtraction
as the ns figures); callgrind's counts do not depend on the machine's load.

    make -C dataplane bench          (BENCH_REF=<commit>, BENCH_ROUNDS=7), or from dataplane/:
    /usr/bin/python3 bench/ab_bench.py --current build/bench \
        --current-callgrind build/bench-callgrind [--ref B --ref-callgrind B --ref-name NAME]

Without --ref it reports the current build alone (a source tree without git history).
"""

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

MIXES = ("ipv4-tcp", "mix")
# One row of bench.c's table: mix, rx->tx ns, director ns, added ns, forwarded %.
ROW = re.compile(r"^(ipv4-tcp|mix)\s+([\d.]+)\s+([\d.]+)\s+(-?[\d.]+)\s+([\d.]+)%$")


def ns_run(binary, packets):
    """One bench run: {mix: (rx->tx ns, director ns, added ns)}; both mixes must be there."""
    out = subprocess.run([binary, "--packets", str(packets)], check=True, capture_output=True,
                         text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line.strip())
        if m:
            rows[m.group(1)] = tuple(float(m.group(i)) for i in (2, 3, 4))
    if set(rows) != set(MIXES):
        sys.exit(f"ab_bench: {binary}: no ns rows for {set(MIXES) - set(rows)} in:\n{out}")
    return rows


def instructions(binary, mix, loop, packets):
    """Instructions callgrind counts inside run_<loop> for `packets` packets of `mix`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        f"--toggle-collect=run_{loop}", binary, "--only", loop, "--mix", mix,
                        "--packets", str(packets)], check=True, capture_output=True)
        for line in out.read_text().splitlines():
            if line.startswith("summary:"):
                return int(line.split()[1])
    sys.exit(f"ab_bench: no callgrind summary for {binary} {mix} {loop}")


def added_instructions(binary, mix, packets):
    """(rx->tx, director, added) instructions per packet, to 2 decimals."""
    base = instructions(binary, mix, "baseline", packets)
    pipe = instructions(binary, mix, "pipeline", packets)
    return base / packets, pipe / packets, (pipe - base) / packets


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--current", required=True)
    ap.add_argument("--current-callgrind", required=True)
    ap.add_argument("--ref")
    ap.add_argument("--ref-callgrind")
    ap.add_argument("--ref-name", default="ref")
    ap.add_argument("--rounds", type=int, default=7)
    # 4M packets: ~0.15 s per pass at ~35 ns, so a round of both binaries is ~3 s.
    ap.add_argument("--packets", type=int, default=4_000_000)
    ap.add_argument("--instr-packets", type=int, default=320_000, help="0: no callgrind")
    args = ap.parse_args()
    if bool(args.ref) != bool(args.ref_callgrind):
        ap.error("--ref and --ref-callgrind go together (the reference's timed and callgrind builds)")

    builds = [("current", args.current, args.current_callgrind)]
    if args.ref:
        builds.insert(0, (args.ref_name, args.ref, args.ref_callgrind))
    names = [b[0] for b in builds]
    runs = {name: [] for name in names}
    for r in range(args.rounds):
        order = builds if r % 2 == 0 else builds[::-1]
        for name, binary, _ in order:
            runs[name].append(ns_run(binary, args.packets))

    print(f"director ns/packet, {args.rounds} alternating rounds of {args.packets:,} packets "
          f"per pass (median of each run's best of 5)")
    head = f"{'mix':<9}" + "".join(f" {n + ' dir':>16} {n + ' added':>16}" for n in names)
    if args.ref:
        head += f" {'added cur/ref':>14} {'dir cur/ref':>12}"
    print(head)
    for mix in MIXES:
        med = {n: (statistics.median(x[mix][1] for x in runs[n]),
                   statistics.median(x[mix][2] for x in runs[n])) for n in names}
        line = f"{mix:<9}" + "".join(f" {med[n][0]:16.2f} {med[n][1]:16.2f}" for n in names)
        if args.ref:
            cur, ref = med["current"], med[args.ref_name]
            line += f" {cur[1] / ref[1]:14.3f} {cur[0] / ref[0]:12.3f}"
        print(line)
    for mix in MIXES:
        for n in names:
            spread = sorted(round(x[mix][2], 2) for x in runs[n])
            print(f"  {mix} {n} added ns per round, sorted: {spread}")

    if args.instr_packets <= 0:
        return
    print(f"instructions/packet (callgrind, {args.instr_packets:,} packets)")
    for mix in MIXES:
        parts = []
        for name, _, cg in builds:
            base, pipe, added = added_instructions(cg, mix, args.instr_packets)
            parts.append(f"{name}: rx->tx {base:.0f}, director {pipe:.2f}, added {added:.2f}")
        print(f"{mix}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
