package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
)

// startIgnored returns the signals this process was started with ignored
// (SIG_IGN), which GNU timeout leaves ignored, for its command too. The Go
// runtime replaces every inherited action with its own handler before any
// of this program runs (only SIGHUP and SIGINT stay ignored), and keeps
// the inherited ones in its table runtime.fwdSig, which no API exposes:
// so it is found in the program's symbol table (the tail of .strtab and
// .symtab, where the linker puts the runtime's data, read through a
// memory map) and read from /proc/self/mem. ok is false, and nothing is
// known, when the program has no symbol table (built with -s), is
// position-independent, or the table does not read as the runtime's.
func startIgnored() (ignored [65]bool, ok bool) {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return ignored, false
	}
	defer f.Close()
	addr, size, ok := elfSymbol(f, "runtime.fwdSig")
	if !ok || size%8 != 0 || size/8 < 32 {
		return ignored, false
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return ignored, false
	}
	defer mem.Close()
	b := make([]byte, size)
	if _, err := mem.ReadAt(b, int64(addr)); err != nil {
		return ignored, false
	}
	for i := 0; i < len(b)/8 && i < len(ignored); i++ {
		switch binary.LittleEndian.Uint64(b[i*8:]) {
		case 0: // SIG_DFL
		case 1: // SIG_IGN
			ignored[i] = true
		default:
			return [65]bool{}, false // a handler: not a table of inherited actions
		}
	}
	return ignored, true
}

// elfSymbol finds a symbol's address and size in an ELF64 little-endian
// executable that is not position-independent, searching its symbol table
// from the end.
func elfSymbol(f *os.File, name string) (addr, size uint64, ok bool) {
	var eh [64]byte
	if _, err := f.ReadAt(eh[:], 0); err != nil || string(eh[:4]) != "\x7fELF" || eh[4] != 2 || eh[5] != 1 {
		return 0, 0, false
	}
	le := binary.LittleEndian
	if le.Uint16(eh[16:]) != 2 { // ET_EXEC
		return 0, 0, false
	}
	shoff, shentsize, shnum := le.Uint64(eh[40:]), uint64(le.Uint16(eh[58:])), uint64(le.Uint16(eh[60:]))
	if shentsize < 64 || shnum == 0 || shnum > 1024 {
		return 0, 0, false
	}
	sh := make([]byte, shentsize*shnum)
	if _, err := f.ReadAt(sh, int64(shoff)); err != nil {
		return 0, 0, false
	}
	section := func(i uint64) (typ uint32, off, sz uint64, link uint32) {
		s := sh[i*shentsize:]
		return le.Uint32(s[4:]), le.Uint64(s[24:]), le.Uint64(s[32:]), le.Uint32(s[40:])
	}
	for i := uint64(0); i < shnum; i++ {
		typ, symOff, symSize, link := section(i)
		if typ != 2 || uint64(link) >= shnum { // SHT_SYMTAB
			continue
		}
		_, strOff, strSize, _ := section(uint64(link))
		return findSymbol(f, name, symOff, symSize, strOff, strSize)
	}
	return 0, 0, false
}

func findSymbol(f *os.File, name string, symOff, symSize, strOff, strSize uint64) (uint64, uint64, bool) {
	strs, err := mapFile(f, strOff, strSize)
	if err != nil {
		return 0, 0, false
	}
	defer syscall.Munmap(strs.whole)
	at := bytes.LastIndex(strs.data, []byte("\x00"+name+"\x00"))
	if at < 0 {
		return 0, 0, false
	}
	syms, err := mapFile(f, symOff, symSize)
	if err != nil {
		return 0, 0, false
	}
	defer syscall.Munmap(syms.whole)
	le := binary.LittleEndian
	for e := len(syms.data)/24 - 1; e >= 0; e-- {
		s := syms.data[e*24:]
		if le.Uint32(s) == uint32(at+1) {
			return le.Uint64(s[8:]), le.Uint64(s[16:]), true
		}
	}
	return 0, 0, false
}

// mapped is a read-only memory map of part of a file.
type mapped struct{ whole, data []byte }

func mapFile(f *os.File, off, size uint64) (mapped, error) {
	page := uint64(os.Getpagesize())
	start := off &^ (page - 1)
	b, err := syscall.Mmap(int(f.Fd()), int64(start), int(size+off-start), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return mapped{}, err
	}
	return mapped{whole: b, data: b[off-start:]}, nil
}
