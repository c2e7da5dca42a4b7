# tide-probes: tracepoint-only BPF programs for host network health and their loader, which the
# Node agent spawns (JSON lines on stdout). Included from dataplane/Makefile after
# redirect/redirect.mk, whose $(BUILD)/vmlinux.h rule, BPFTOOL and REDIRECT_LIBS-style flags it
# reuses. Needs clang, llvm, bpftool, libbpf-dev, libelf-dev, zlib1g-dev, libjansson-dev,
# python3-pytest (tests).
#
#   make build/tide-probes   loader (the BPF object is embedded through the skeleton)
#   make test-probes         reproduces every signal in network namespaces and checks the probe
#                            saw it, then a connect() overhead figure (root)

BPFTOOL       ?= bpftool
PROBES_BPF_H  := $(wildcard probes/tide_probes_*.h)
# The loader: main and options, load/attach, the JSON lines; tide_probes.h is what they share.
PROBES_SRC    := probes/tide_probes.c probes/probes_load.c probes/probes_report.c
PROBES_H      := probes/tide_probes.h
PROBES_CFLAGS := $(CFLAGS_BASE) -Iprobes -I$(BUILD) -DTIDE_VERSION='"$(VERSION)"'

$(BUILD)/tide_probes.bpf.o: probes/tide_probes.bpf.c $(PROBES_BPF_H) $(BUILD)/vmlinux.h
	$(CLANG) -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I$(BUILD) -Iprobes \
		-c $< -o $@

$(BUILD)/tide_probes.skel.h: $(BUILD)/tide_probes.bpf.o
	$(BPFTOOL) gen skeleton $< name tide_probes_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/tide-probes: $(PROBES_SRC) $(PROBES_H) $(DAEMON_SRC) $(DAEMON_H) $(PROBES_BPF_H) \
                      $(BUILD)/tide_probes.skel.h
	$(CC) $(PROBES_CFLAGS) -o $@ $(PROBES_SRC) $(DAEMON_SRC) $(LDFLAGS_BASE) -lbpf -lelf -lz -ljansson

.PHONY: test-probes
test-probes: $(BUILD)/tide-probes
	cd tests/probes && TIDE_PROBES=$(abspath $(BUILD)/tide-probes) \
		$(PYTHON) -m pytest -q -s -p no:cacheprovider test_probes.py

PROBES_BUILD := $(BUILD)/tide-probes
PROBES_TESTS := test-probes
C_FILES      += $(wildcard probes/*.c probes/*.h)
