# tide-nsdiag: LISTEN sockets (inet_diag), sysctls and /proc/net counters of many network
# namespaces for the Node agent, which spawns it once and talks JSON lines over stdin/stdout.
# Included from dataplane/Makefile. Needs libjansson-dev. Its test is the agent's lab test
# apps/agent/src/sampling/nsdiag.lab-test.ts (real namespaces, root), run by test-nsdiag.
#
#   make build/tide-nsdiag
#   make test-nsdiag         the lab test against this build, then against an ASan/UBSan build
#                            (a sanitizer report kills tide-nsdiag, which fails the test), then
#                            its ESTABLISHED tests against an ASan build whose table holds 64
#                            address:ports, so that 5,001 of them go through pruning (root)

NSDIAG_CFLAGS := $(CFLAGS_BASE) -DTIDE_VERSION='"$(VERSION)"'

$(BUILD)/tide-nsdiag: nsdiag/tide_nsdiag.c | $(BUILD)
	$(CC) $(NSDIAG_CFLAGS) -o $@ nsdiag/tide_nsdiag.c $(LDFLAGS_BASE) -ljansson

$(BUILD)/tide-nsdiag-asan: nsdiag/tide_nsdiag.c | $(BUILD)
	$(CLANG) $(NSDIAG_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ nsdiag/tide_nsdiag.c -ljansson

# The same, with a 64-key ESTABLISHED table: the lab test's 10,000 sockets prune it ~150 times.
NSDIAG_SMALL_TABLE := 64
$(BUILD)/tide-nsdiag-small-table: nsdiag/tide_nsdiag.c | $(BUILD)
	$(CLANG) $(NSDIAG_CFLAGS) -DMAX_EST_KEYS=$(NSDIAG_SMALL_TABLE) -O1 -fno-omit-frame-pointer \
		-fsanitize=address,undefined -fno-sanitize-recover=all -o $@ nsdiag/tide_nsdiag.c -ljansson

.PHONY: test-nsdiag
test-nsdiag: $(BUILD)/tide-nsdiag $(BUILD)/tide-nsdiag-asan $(BUILD)/tide-nsdiag-small-table
	cd .. && TIDE_NSDIAG_BINARY=$(abspath $(BUILD)/tide-nsdiag) \
		npx vitest run --project lab apps/agent/src/sampling/nsdiag.lab-test.ts
	cd .. && TIDE_NSDIAG_BINARY=$(abspath $(BUILD)/tide-nsdiag-asan) \
		npx vitest run --project lab apps/agent/src/sampling/nsdiag.lab-test.ts
	cd .. && TIDE_NSDIAG_BINARY=$(abspath $(BUILD)/tide-nsdiag-small-table) \
		TIDE_NSDIAG_EST_KEYS=$(NSDIAG_SMALL_TABLE) \
		npx vitest run --project lab apps/agent/src/sampling/nsdiag.lab-test.ts -t ESTABLISHED

NSDIAG_BUILD := $(BUILD)/tide-nsdiag
NSDIAG_TESTS := test-nsdiag
C_FILES      += $(wildcard nsdiag/*.c nsdiag/*.h)
