// Package guardelf is the cgroup tier's guardian as a native program of a
// few hundred bytes: a static ELF executable that corral writes to a
// sealed memory file and executes, so that binding a run's tree to its
// supervisor (guarantee 7) does not cost a Go program's start.
//
// The guardian is the one process that acts when its supervisor is gone:
// nothing in a SIGKILLed process's address space runs again. corral starts
// it once per process, before its first cgroup-tier run, with
//
//   - fd 0: the read end of a pipe whose write end corral alone holds
//     (close-on-exec, so no command inherits it);
//   - fd 1: cgroup.kill of corral's own cgroup directory, the one every
//     leaf it makes sits in, open for writing;
//   - argv[1]: that directory.
//
// It names itself corral-shim (the name by which a supervisor that
// inherits its zombie knows it), blocks every signal that can be blocked,
// and reads fd 0 until end of file: corral exited, was killed or executed
// another program. Then it writes "1" to cgroup.kill, which kills every
// process of every leaf below the directory at once, including those
// forked a moment before; it tries to remove the directory, which succeeds
// only when corral left no leaf (a clean exit); and it exits 0. A leaf
// whose processes were meant to outlive corral is moved out of the
// directory first (internal/cgroup's Leaf.MoveOut).
//
// Its start is an exec of a 300-byte image that touches two pages: a Go
// program's start (the guardian corral-shim runs elsewhere) takes a
// hundred times the CPU and two hundred page faults, on every corral
// command that runs anything. The machine code is testdata/guardian_*.S
// assembled; TestCodeIsItsSourceAssembled checks the bytes against the
// source where the assembler is installed. Other architectures, and
// kernels or policies that refuse to execute a memory file, use the Go
// guardian (internal/shim), which keeps the same contract.
package guardelf

import (
	"encoding/binary"
	"runtime"
)

// base is the address the image is loaded at.
const base = 0x400000

// Image returns the guardian as a static ELF executable for this
// machine, or nil where there is none (only Linux on amd64 and arm64 has
// one). Each call returns a new slice.
func Image() []byte {
	if runtime.GOOS != "linux" || len(code) == 0 {
		return nil
	}
	return image(machine, code)
}

// Executable wraps code, position-independent machine code for machine
// (an ELF e_machine) whose entry is its first byte and which writes
// nothing but its stack and the memory it maps, in the same static ELF
// executable Image makes: one read-only, executable segment. It is how
// internal/initelf's native init is loaded.
func Executable(machine uint16, code []byte) []byte { return image(machine, code) }

// image wraps code in an ELF header and two program headers: one loadable
// segment, readable and executable, holding the whole file (the code is
// position-independent and its data read-only), and a stack that is not
// executable.
func image(machine uint16, code []byte) []byte {
	const ehsize, phsize, phnum = 64, 56, 2
	const hdr = ehsize + phnum*phsize
	img := make([]byte, hdr+len(code))
	le := binary.LittleEndian
	copy(img, "\x7fELF\x02\x01\x01") // 64-bit, little-endian, version 1, System V ABI
	le.PutUint16(img[16:], 2)        // ET_EXEC
	le.PutUint16(img[18:], machine)
	le.PutUint32(img[20:], 1)        // EV_CURRENT
	le.PutUint64(img[24:], base+hdr) // entry: the code's first byte
	le.PutUint64(img[32:], ehsize)   // program headers' offset
	le.PutUint16(img[52:], ehsize)   // header size
	le.PutUint16(img[54:], phsize)   // program header size
	le.PutUint16(img[56:], phnum)    // program headers
	load := img[ehsize:]             // PT_LOAD
	le.PutUint32(load[0:], 1)        // type
	le.PutUint32(load[4:], 4|1)      // PF_R|PF_X
	le.PutUint64(load[16:], base)    // virtual address (offset 0)
	le.PutUint64(load[24:], base)    // physical address
	le.PutUint64(load[32:], uint64(len(img)))
	le.PutUint64(load[40:], uint64(len(img)))
	le.PutUint64(load[48:], 0x10000)    // alignment: the largest page
	stack := img[ehsize+phsize:]        // PT_GNU_STACK
	le.PutUint32(stack[0:], 0x6474e551) // type
	le.PutUint32(stack[4:], 4|2)        // PF_R|PF_W
	copy(img[hdr:], code)
	return img
}
