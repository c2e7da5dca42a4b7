;; Rendezvous ranking of table rows in WebAssembly: the hot loop of computeRendezvousOrder()
;; (src/rendezvous.ts, the reference), with SipHash-2-4 on native i64 instead of 32-bit halves.
;;
;; Per row r (same definitions as rendezvous.ts):
;;   row_seed = siphash(seed, u32be(r))
;;   score(p) = siphash(seed, row_seed || ip(p)), its 8 output bytes read as a big-endian u64
;;   row r of the output = the k proxy indexes of lowest score, ascending (ties: lower index first)
;;
;; The caller (src/wasm/rank-wasm.ts) writes the keyed initial state and every proxy's message
;; blocks after the row seed (1 block for IPv4: ip || length 12; 3 for IPv6: ip[0..8), ip[8..16),
;; length 24), then calls rank() for a range of rows; the results land at OUT, k bytes a row.
;;
;; Linear memory (5 pages = 320 KiB; offsets in bytes, exported as globals so the caller does
;; not repeat them):
;;   INIT    0      v0..v3 of the keyed initial state, 4 x i64
;;   BLOCKS  64     per proxy 3 x i64 message blocks (only the first `count` used), 256 x 24 bytes
;;   COUNTS  6208   per proxy the number of blocks (1 or 3), 256 x u8
;;   SCORES  6464   the current row's k lowest scores, ascending, 256 x i64
;;   OUT     16384  rank() output: k bytes a row; at most 1,024 rows x 256 = 256 KiB a call
;;                  (rank-wasm.ts ranks 1,024 rows per call)
;; During a row, OUT's row slot doubles as the top-k index array (k bytes), so nothing is copied;
;; at depth 4 (the default) the kept scores and indexes move to locals after the first 4 proxies.
(module
  (memory (export "memory") 5)
  (global (export "INIT") i32 (i32.const 0))
  (global (export "BLOCKS") i32 (i32.const 64))
  (global (export "COUNTS") i32 (i32.const 6208))
  (global (export "OUT") i32 (i32.const 16384))
  (global $SCORES i32 (i32.const 6464))

  ;; n SipRounds on (v0, v1, v2, v3). Used once or twice per row and per extra IPv6 block; the
  ;; per-proxy rounds of the hot loop are written out in rank() to spare the call.
  (func $rounds (param $v0 i64) (param $v1 i64) (param $v2 i64) (param $v3 i64) (param $n i32)
    (result i64 i64 i64 i64)
    (loop $round
      (local.set $v0 (i64.add (local.get $v0) (local.get $v1)))
      (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 13)) (local.get $v0)))
      (local.set $v0 (i64.rotl (local.get $v0) (i64.const 32)))
      (local.set $v2 (i64.add (local.get $v2) (local.get $v3)))
      (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 16)) (local.get $v2)))
      (local.set $v0 (i64.add (local.get $v0) (local.get $v3)))
      (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 21)) (local.get $v0)))
      (local.set $v2 (i64.add (local.get $v2) (local.get $v1)))
      (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 17)) (local.get $v2)))
      (local.set $v2 (i64.rotl (local.get $v2) (i64.const 32)))
      (br_if $round (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3))

  ;; Writes rows [first, end) of the order prefix (k of n proxies a row) at OUT, row `first` at
  ;; OUT + 0. Requires 1 <= k <= n <= 256 and (end - first) * k <= 311,296.
  (func (export "rank") (param $n i32) (param $k i32) (param $first i32) (param $end i32)
    (local $row i32) (local $out i32) (local $p i32) (local $blocks i32) (local $b i32)
    (local $filled i32) (local $j i32) (local $at i32)
    (local $i0 i64) (local $i1 i64) (local $i2 i64) (local $i3 i64)
    (local $r0 i64) (local $r1 i64) (local $r2 i64) (local $r3 i64)
    (local $v0 i64) (local $v1 i64) (local $v2 i64) (local $v3 i64)
    (local $m i64) (local $s i64) (local $worst i64) (local $prev i64)
    (local $t0 i64) (local $t1 i64) (local $t2 i64) (local $t3 i64)
    (local $j0 i32) (local $j1 i32) (local $j2 i32) (local $j3 i32)
    (local $c0 i32) (local $c1 i32) (local $c2 i32)
    (local.set $i0 (i64.load offset=0 (i32.const 0)))
    (local.set $i1 (i64.load offset=8 (i32.const 0)))
    (local.set $i2 (i64.load offset=16 (i32.const 0)))
    (local.set $i3 (i64.load offset=24 (i32.const 0)))
    (local.set $row (local.get $first))
    (local.set $out (i32.const 16384))
    (block $rows_done
      (br_if $rows_done (i32.ge_u (local.get $row) (local.get $end)))
      (loop $row_loop
        ;; Row seed: one block, u32be(row)'s 4 bytes read little-endian (bswap32), length 4 in
        ;; the top byte; 2 rounds, then v2 ^= 0xff and 4 finalization rounds.
        (local.set $m
          (i64.or
            (i64.extend_i32_u
              (i32.or
                (i32.or (i32.shl (local.get $row) (i32.const 24))
                        (i32.shl (i32.and (local.get $row) (i32.const 0xff00)) (i32.const 8)))
                (i32.or (i32.and (i32.shr_u (local.get $row) (i32.const 8)) (i32.const 0xff00))
                        (i32.shr_u (local.get $row) (i32.const 24)))))
            (i64.const 0x0400000000000000)))
        (call $rounds (local.get $i0) (local.get $i1) (local.get $i2)
          (i64.xor (local.get $i3) (local.get $m)) (i32.const 2))
        (local.set $v3) (local.set $v2) (local.set $v1) (local.set $v0)
        (call $rounds (i64.xor (local.get $v0) (local.get $m)) (local.get $v1)
          (i64.xor (local.get $v2) (i64.const 0xff)) (local.get $v3) (i32.const 4))
        (local.set $v3) (local.set $v2) (local.set $v1) (local.set $v0)
        ;; Row state: the initial state with row_seed (message bytes 0..8) compressed in.
        (local.set $m (i64.xor (i64.xor (local.get $v0) (local.get $v1))
                               (i64.xor (local.get $v2) (local.get $v3))))
        (call $rounds (local.get $i0) (local.get $i1) (local.get $i2)
          (i64.xor (local.get $i3) (local.get $m)) (i32.const 2))
        (local.set $r3) (local.set $r2) (local.set $r1) (local.set $r0)
        (local.set $r0 (i64.xor (local.get $r0) (local.get $m)))
        ;; Row prelude: the first half of each proxy's first round (v0 += v1; v1 = rotl(v1, 13)
        ;; ^ v0; v0 = rotl(v0, 32)) does not involve v3, where the proxy's block enters.
        (local.set $r0 (i64.add (local.get $r0) (local.get $r1)))
        (local.set $r1 (i64.xor (i64.rotl (local.get $r1) (i64.const 13)) (local.get $r0)))
        (local.set $r0 (i64.rotl (local.get $r0) (i64.const 32)))

        (local.set $filled (i32.const 0))
        (local.set $p (i32.const 0))
        (loop $proxy_loop
          (local.set $m (i64.load offset=64 (i32.mul (local.get $p) (i32.const 24))))
          (local.set $v0 (local.get $r0))
          (local.set $v1 (local.get $r1))
          (local.set $v2 (local.get $r2))
          (local.set $v3 (i64.xor (local.get $r3) (local.get $m)))
          ;; Rest of the first round.
          (local.set $v2 (i64.add (local.get $v2) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 16)) (local.get $v2)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 21)) (local.get $v0)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 17)) (local.get $v2)))
          (local.set $v2 (i64.rotl (local.get $v2) (i64.const 32)))
          ;; The block's second round, written out (a loop over rounds 2..6 with the block's end
          ;; inside cost 15-20 % of the ranking: its counter and branch, v0..v3 kept out of registers).
          (local.set $v0 (i64.add (local.get $v0) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 13)) (local.get $v0)))
          (local.set $v0 (i64.rotl (local.get $v0) (i64.const 32)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 16)) (local.get $v2)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 21)) (local.get $v0)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 17)) (local.get $v2)))
          (local.set $v2 (i64.rotl (local.get $v2) (i64.const 32)))
          ;; The block's end; an IPv6 proxy's two more blocks (a branch IPv4 tables always predict).
          (local.set $v0 (i64.xor (local.get $v0) (local.get $m)))
          (local.set $blocks (i32.load8_u offset=6208 (local.get $p)))
          (if (i32.gt_u (local.get $blocks) (i32.const 1))
            (then
              (local.set $b (i32.const 1))
              (loop $block_loop
                (local.set $m (i64.load offset=64
                  (i32.add (i32.mul (local.get $p) (i32.const 24))
                           (i32.shl (local.get $b) (i32.const 3)))))
                (call $rounds (local.get $v0) (local.get $v1) (local.get $v2)
                  (i64.xor (local.get $v3) (local.get $m)) (i32.const 2))
                (local.set $v3) (local.set $v2) (local.set $v1) (local.set $v0)
                (local.set $v0 (i64.xor (local.get $v0) (local.get $m)))
                (br_if $block_loop (i32.lt_u
                  (local.tee $b (i32.add (local.get $b) (i32.const 1))) (local.get $blocks))))))
          (local.set $v2 (i64.xor (local.get $v2) (i64.const 0xff)))
          ;; The 4 finalization rounds, written out.
          (local.set $v0 (i64.add (local.get $v0) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 13)) (local.get $v0)))
          (local.set $v0 (i64.rotl (local.get $v0) (i64.const 32)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 16)) (local.get $v2)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 21)) (local.get $v0)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 17)) (local.get $v2)))
          (local.set $v2 (i64.rotl (local.get $v2) (i64.const 32)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 13)) (local.get $v0)))
          (local.set $v0 (i64.rotl (local.get $v0) (i64.const 32)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 16)) (local.get $v2)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 21)) (local.get $v0)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 17)) (local.get $v2)))
          (local.set $v2 (i64.rotl (local.get $v2) (i64.const 32)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 13)) (local.get $v0)))
          (local.set $v0 (i64.rotl (local.get $v0) (i64.const 32)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 16)) (local.get $v2)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 21)) (local.get $v0)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 17)) (local.get $v2)))
          (local.set $v2 (i64.rotl (local.get $v2) (i64.const 32)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 13)) (local.get $v0)))
          (local.set $v0 (i64.rotl (local.get $v0) (i64.const 32)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 16)) (local.get $v2)))
          (local.set $v0 (i64.add (local.get $v0) (local.get $v3)))
          (local.set $v3 (i64.xor (i64.rotl (local.get $v3) (i64.const 21)) (local.get $v0)))
          (local.set $v2 (i64.add (local.get $v2) (local.get $v1)))
          (local.set $v1 (i64.xor (i64.rotl (local.get $v1) (i64.const 17)) (local.get $v2)))
          (local.set $v2 (i64.rotl (local.get $v2) (i64.const 32)))
          ;; Score: the little-endian output bytes read big-endian, i.e. byte-swapped.
          (local.set $s (i64.xor (i64.xor (local.get $v0) (local.get $v1))
                                 (i64.xor (local.get $v2) (local.get $v3))))
          (local.set $s (i64.or
            (i64.and (i64.shr_u (local.get $s) (i64.const 8)) (i64.const 0x00ff00ff00ff00ff))
            (i64.shl (i64.and (local.get $s) (i64.const 0x00ff00ff00ff00ff)) (i64.const 8))))
          (local.set $s (i64.or
            (i64.and (i64.shr_u (local.get $s) (i64.const 16)) (i64.const 0x0000ffff0000ffff))
            (i64.shl (i64.and (local.get $s) (i64.const 0x0000ffff0000ffff)) (i64.const 16))))
          (local.set $s (i64.rotl (local.get $s) (i64.const 32)))
          (block $next
            ;; Depth 4 (the default) past the first 4 proxies: the four kept scores and indexes
            ;; live in locals and a score below the worst is inserted with selects (cmov), not
            ;; a shifting loop whose exit branch mispredicts about every other time.
            (if (i32.and (i32.eq (local.get $k) (i32.const 4)) (i32.ge_u (local.get $p) (i32.const 4)))
              (then
                (br_if $next (i64.ge_u (local.get $s) (local.get $t3)))
                (local.set $c0 (i64.lt_u (local.get $s) (local.get $t0)))
                (local.set $c1 (i64.lt_u (local.get $s) (local.get $t1)))
                (local.set $c2 (i64.lt_u (local.get $s) (local.get $t2)))
                (local.set $t3 (select (local.get $t2) (local.get $s) (local.get $c2)))
                (local.set $j3 (select (local.get $j2) (local.get $p) (local.get $c2)))
                (local.set $t2 (select (local.get $t1)
                  (select (local.get $s) (local.get $t2) (local.get $c2)) (local.get $c1)))
                (local.set $j2 (select (local.get $j1)
                  (select (local.get $p) (local.get $j2) (local.get $c2)) (local.get $c1)))
                (local.set $t1 (select (local.get $t0)
                  (select (local.get $s) (local.get $t1) (local.get $c1)) (local.get $c0)))
                (local.set $j1 (select (local.get $j0)
                  (select (local.get $p) (local.get $j1) (local.get $c1)) (local.get $c0)))
                (local.set $t0 (select (local.get $s) (local.get $t0) (local.get $c0)))
                (local.set $j0 (select (local.get $p) (local.get $j0) (local.get $c0)))
                (br $next)))
            ;; Top-k insertion, as rankRow: with k kept, a score not below the worst is dropped
            ;; (a tie keeps the earlier, lower index); else the worst leaves and the new score
            ;; sinks past every strictly greater one.
            (if (i32.eq (local.get $filled) (local.get $k))
              (then
                (br_if $next (i64.ge_u (local.get $s) (local.get $worst)))
                (local.set $filled (i32.sub (local.get $filled) (i32.const 1)))))
            (local.set $j (local.get $filled))
            (block $placed
              (loop $sink
                (br_if $placed (i32.eqz (local.get $j)))
                (local.set $at (i32.add (global.get $SCORES)
                  (i32.shl (i32.sub (local.get $j) (i32.const 1)) (i32.const 3))))
                (local.set $prev (i64.load (local.get $at)))
                (br_if $placed (i64.le_u (local.get $prev) (local.get $s)))
                (i64.store offset=8 (local.get $at) (local.get $prev))
                (i32.store8 (i32.add (local.get $out) (local.get $j))
                  (i32.load8_u (i32.sub (i32.add (local.get $out) (local.get $j)) (i32.const 1))))
                (local.set $j (i32.sub (local.get $j) (i32.const 1)))
                (br $sink)))
            (i64.store (i32.add (global.get $SCORES) (i32.shl (local.get $j) (i32.const 3)))
              (local.get $s))
            (i32.store8 (i32.add (local.get $out) (local.get $j)) (local.get $p))
            (local.set $filled (i32.add (local.get $filled) (i32.const 1)))
            (if (i32.eq (local.get $filled) (local.get $k))
              (then
                (local.set $worst (i64.load (i32.add (global.get $SCORES)
                  (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 3)))))
                ;; Depth 4: the first four proxies are in; the fast path takes over from here.
                (if (i32.eq (local.get $k) (i32.const 4))
                  (then
                    (local.set $t0 (i64.load offset=0 (global.get $SCORES)))
                    (local.set $t1 (i64.load offset=8 (global.get $SCORES)))
                    (local.set $t2 (i64.load offset=16 (global.get $SCORES)))
                    (local.set $t3 (i64.load offset=24 (global.get $SCORES)))
                    (local.set $j0 (i32.load8_u offset=0 (local.get $out)))
                    (local.set $j1 (i32.load8_u offset=1 (local.get $out)))
                    (local.set $j2 (i32.load8_u offset=2 (local.get $out)))
                    (local.set $j3 (i32.load8_u offset=3 (local.get $out))))))))
          (br_if $proxy_loop (i32.lt_u
            (local.tee $p (i32.add (local.get $p) (i32.const 1))) (local.get $n))))
        (if (i32.eq (local.get $k) (i32.const 4))
          (then
            (i32.store8 offset=0 (local.get $out) (local.get $j0))
            (i32.store8 offset=1 (local.get $out) (local.get $j1))
            (i32.store8 offset=2 (local.get $out) (local.get $j2))
            (i32.store8 offset=3 (local.get $out) (local.get $j3))))
        (local.set $out (i32.add (local.get $out) (local.get $k)))
        (br_if $row_loop (i32.lt_u
          (local.tee $row (i32.add (local.get $row) (i32.const 1))) (local.get $end))))))
)
