# tide-redirect: the proxy-side second-chance BPF program (TC clsact ingress) and its daemon.
# Included from dataplane/Makefile; paths are relative to dataplane/. Needs clang, llvm, bpftool,
# libbpf-dev, libelf-dev, zlib1g-dev, libjansson-dev.
#
#   make build/tide-redirect   daemon (the BPF object is embedded through the skeleton)
#   make test-redirect         BPF_PROG_TEST_RUN fixtures for every decision, an end-to-end run in
#                              two network namespaces, ns/packet figures (root; kernel >= 6.3)

BPFTOOL        ?= bpftool
VMLINUX_BTF    ?= /sys/kernel/btf/vmlinux
REDIRECT_BPF_H := $(wildcard redirect/tide_redirect_*.h)
REDIRECT_SRC   := redirect/tide_redirect.c redirect/redirect_maps.c redirect/control.c \
                  control/tide_control.c $(DAEMON_SRC) $(SD_NOTIFY_SRC)
REDIRECT_HDR   := redirect/tide_redirect.h redirect/redirect_maps.h redirect/control.h \
                  control/tide_control.h $(DAEMON_H) common/tide_sd_notify.h $(REDIRECT_BPF_H)
REDIRECT_CFLAGS := $(CFLAGS_BASE) -Iredirect -I$(BUILD) -DTIDE_VERSION='"$(VERSION)"'
REDIRECT_LIBS  := -lbpf -lelf -lz

# The kernel's own types, from its BTF (never committed: it belongs to the running kernel).
$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/tide_redirect.bpf.o: redirect/tide_redirect.bpf.c $(REDIRECT_BPF_H) $(BUILD)/vmlinux.h
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I$(BUILD) -Iredirect \
		-c $< -o $@

$(BUILD)/tide_redirect.skel.h: $(BUILD)/tide_redirect.bpf.o
	$(BPFTOOL) gen skeleton $< name tide_redirect_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/tide-redirect: $(REDIRECT_SRC) $(REDIRECT_HDR) $(BUILD)/tide_redirect.skel.h
	$(CC) $(REDIRECT_CFLAGS) -o $@ $(REDIRECT_SRC) $(LDFLAGS_BASE) $(REDIRECT_LIBS) -ljansson

# The test: main (redirect_test.c), packet builders, fixtures, end to end; the daemon's map
# accessors too, which the fixtures read the flow map with.
REDIRECT_TEST_SRC := $(wildcard tests/redirect/*.c) redirect/redirect_maps.c
REDIRECT_TEST_H   := $(wildcard tests/redirect/*.h) redirect/redirect_maps.h redirect/tide_redirect.h \
                     redirect/control.h
$(BUILD)/redirect-test: $(REDIRECT_TEST_SRC) $(REDIRECT_TEST_H) $(DAEMON_SRC) $(DAEMON_H) \
                        $(REDIRECT_BPF_H) $(BUILD)/tide_redirect.skel.h
	$(CC) $(REDIRECT_CFLAGS) -o $@ $(REDIRECT_TEST_SRC) $(DAEMON_SRC) $(REDIRECT_LIBS) -ljansson

.PHONY: test-redirect
test-redirect: $(BUILD)/redirect-test $(BUILD)/tide-redirect
	$(BUILD)/redirect-test --daemon $(BUILD)/tide-redirect

REDIRECT_BUILD := $(BUILD)/tide-redirect
REDIRECT_TESTS := test-redirect
C_FILES        += $(wildcard redirect/*.c redirect/*.h tests/redirect/*.c tests/redirect/*.h)
