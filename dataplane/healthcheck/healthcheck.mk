# tide-healthcheck: proxy health checks (gue, tcp, http) of a director host for the Node agent,
# which spawns it once and talks JSON lines over stdin/stdout (packages/contracts/src/
# healthcheck-wire.ts). Included from dataplane/Makefile. Needs libjansson-dev. Its test is the
# agent's lab test apps/agent/src/health/healthcheck-binary.lab-test.ts (real namespaces, the real
# tide-redirect, root), run by test-healthcheck.
#
#   make build/tide-healthcheck
#   make test-healthcheck    the lab test against this build, then against an ASan/UBSan build
#                            (a sanitizer report kills tide-healthcheck, which fails the test) (root)

HEALTHCHECK_SRC    := $(wildcard healthcheck/*.c)
HEALTHCHECK_H      := $(wildcard healthcheck/*.h)
HEALTHCHECK_CFLAGS := $(CFLAGS_BASE) -Ihealthcheck -DTIDE_VERSION='"$(VERSION)"'

$(BUILD)/tide-healthcheck: $(HEALTHCHECK_SRC) $(HEALTHCHECK_H) $(COMMON_H) $(DAEMON_SRC) | $(BUILD)
	$(CC) $(HEALTHCHECK_CFLAGS) -pthread -o $@ $(HEALTHCHECK_SRC) $(DAEMON_SRC) $(LDFLAGS_BASE) \
		-ljansson

$(BUILD)/tide-healthcheck-asan: $(HEALTHCHECK_SRC) $(HEALTHCHECK_H) $(COMMON_H) $(DAEMON_SRC) | $(BUILD)
	$(CLANG) $(HEALTHCHECK_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -pthread -o $@ $(HEALTHCHECK_SRC) $(DAEMON_SRC) -ljansson

# The test also needs tide-redirect (GUE decapsulation on the proxy side).
.PHONY: test-healthcheck
test-healthcheck: $(BUILD)/tide-healthcheck $(BUILD)/tide-healthcheck-asan $(BUILD)/tide-redirect
	cd .. && TIDE_HEALTHCHECK_BINARY=$(abspath $(BUILD)/tide-healthcheck) \
		TIDE_REDIRECT_BINARY=$(abspath $(BUILD)/tide-redirect) \
		npx vitest run --project lab apps/agent/src/health/healthcheck-binary.lab-test.ts
	cd .. && TIDE_HEALTHCHECK_BINARY=$(abspath $(BUILD)/tide-healthcheck-asan) \
		TIDE_REDIRECT_BINARY=$(abspath $(BUILD)/tide-redirect) \
		npx vitest run --project lab apps/agent/src/health/healthcheck-binary.lab-test.ts

HEALTHCHECK_BUILD := $(BUILD)/tide-healthcheck
HEALTHCHECK_TESTS := test-healthcheck
C_FILES           += $(HEALTHCHECK_SRC) $(HEALTHCHECK_H)
