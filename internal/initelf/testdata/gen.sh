#!/bin/sh
# Makes internal/initelf's code_amd64.go from init_amd64.c: compiled position-independent with no C library,
# linked by link_amd64.ld so that its entry is its first byte and its
# code and read-only data one section, then taken out whole. Run from
# internal/initelf: sh testdata/gen.sh (sh testdata/gen.sh -bin DIR writes
# the bytes alone, init.bin, and where kill_tree and confine start, into DIR).
set -eu
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CFLAGS="-Os -fPIC -nostdlib -ffreestanding -fno-stack-protector -fno-builtin -fno-asynchronous-unwind-tables -fno-jump-tables -fcf-protection=none"
build() { # build OUT
	gcc -c $CFLAGS -o "$work/init.o" init_amd64.c
	ld -static -nostdlib -T link_amd64.ld -o "$work/init.elf" "$work/init.o"
	if readelf -S -W "$work/init.elf" | grep -Eq '\.(data|bss|got|rela)'; then
		echo "init_amd64.c must have no writable data and no relocations" >&2
		exit 1
	fi
	objcopy -O binary -j .text "$work/init.elf" "$1"
}
# at prints where function $1 starts in the bytes, for the mutants
# (mutation_nativenokill_amd64.go, mutation_nativeunconfined_amd64.go,
# mutation_nativegatehandsall_amd64.go).
at() {
	fn=$(nm "$work/init.elf" | awk -v f="$1" '$3 == f { print $1 }')
	start=$(nm "$work/init.elf" | awk '$3 == "_start" { print $1 }')
	printf '%#x\n' $((0x$fn - 0x$start))
}
if [ "${1:-}" = -bin ]; then
	# The bytes alone, and where kill_tree starts, into directory $2 (the
	# test compares them).
	build "$2/init.bin"
	at kill_tree >"$2/killtree"
	at confine >"$2/confine"
	at gate_answer >"$2/gateanswer"
	exit 0
fi
build "$work/init.bin"
{
	echo "package initelf"
	echo
	echo "// The native init's machine code for linux/amd64: testdata/init_amd64.c"
	echo "// compiled by testdata/gen.sh with $(gcc --version | head -n 1)"
	echo "// (TestCodeIsItsSourceCompiled checks it where that compiler is installed)."
	echo
	echo "const compiler = \"$(gcc --version | head -n 1)\""
	echo
	echo "// killTreeAt is where the function that kills what a run left starts."
	echo "const killTreeAt = $(at kill_tree)"
	echo
	echo "// confineAt is where the function that confines a sandbox's command starts."
	echo "const confineAt = $(at confine)"
	echo
	echo "// gateAnswerAt is where the function that answers a gated connect itself starts."
	echo "const gateAnswerAt = $(at gate_answer)"
	echo
	echo "var code = []byte(\"\" +"
	od -An -v -tx1 "$work/init.bin" | tr -s ' ' | sed 's/^ //; s/ $//; s/ /\\x/g; s/^/\t"\\x/; s/$/" +/'
	echo "\t\"\")"
} | gofmt >../code_amd64.go
