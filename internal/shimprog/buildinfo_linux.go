package shimprog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
)

// readBuildInfo reads the build information of the Go program at path from
// its .go.buildinfo section, as debug/buildinfo does for the form every Go
// release since 1.18 writes (the version and module information inline
// after a 32-byte header), with a handful of reads. debug/buildinfo itself
// links every executable format and its compression (debug/elf, macho, pe,
// dwarf, compress/zlib), whose initialisers every corral command paid.
func readBuildInfo(path string) (*debug.BuildInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := elfSection(f, ".go.buildinfo", 64<<10)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	const magic = "\xff Go buildinf:"
	if len(data) < 32 || string(data[:len(magic)]) != magic || data[15]&2 == 0 {
		return nil, fmt.Errorf("%s: no inline Go build information", path)
	}
	version, rest := uvarintString(data[32:])
	mod, _ := uvarintString(rest)
	// The module information sits between two 16-byte sentinels.
	if len(mod) < 33 || mod[len(mod)-17] != '\n' {
		return nil, fmt.Errorf("%s: malformed Go build information", path)
	}
	info, err := debug.ParseBuildInfo(string(mod[16 : len(mod)-16]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	info.GoVersion = string(version)
	return info, nil
}

// uvarintString reads a string prefixed by its length as a uvarint.
func uvarintString(b []byte) (s, rest []byte) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return nil, nil
	}
	return b[w : w+int(n)], b[w+int(n):]
}

// elfSection returns the first max bytes of the section name of the ELF
// file f (64- or 32-bit, either byte order).
func elfSection(f *os.File, name string, max int) ([]byte, error) {
	var h [64]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, err
	}
	if string(h[:4]) != "\x7fELF" {
		return nil, errors.New("not an ELF file")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if h[5] == 2 {
		bo = binary.BigEndian
	}
	// Where the section headers are, and what a header holds: the name's
	// offset in the names' section, then (after type, flags, address) the
	// section's offset and size.
	var shoff uint64
	var shentsize, shnum, shstrndx int
	var off func(sh []byte) (nameOff int, offset, size uint64)
	switch h[4] {
	case 2:
		shoff = bo.Uint64(h[40:])
		shentsize, shnum, shstrndx = int(bo.Uint16(h[58:])), int(bo.Uint16(h[60:])), int(bo.Uint16(h[62:]))
		off = func(sh []byte) (int, uint64, uint64) {
			return int(bo.Uint32(sh[0:])), bo.Uint64(sh[24:]), bo.Uint64(sh[32:])
		}
	case 1:
		shoff = uint64(bo.Uint32(h[32:]))
		shentsize, shnum, shstrndx = int(bo.Uint16(h[46:])), int(bo.Uint16(h[48:])), int(bo.Uint16(h[50:]))
		off = func(sh []byte) (int, uint64, uint64) {
			return int(bo.Uint32(sh[0:])), uint64(bo.Uint32(sh[16:])), uint64(bo.Uint32(sh[20:]))
		}
	default:
		return nil, errors.New("unknown ELF class")
	}
	if shentsize < 40 || shnum == 0 || shnum > 1<<12 || shstrndx >= shnum {
		return nil, errors.New("no section headers")
	}
	shs := make([]byte, shentsize*shnum)
	if _, err := f.ReadAt(shs, int64(shoff)); err != nil {
		return nil, err
	}
	read := func(offset, size uint64, max int) ([]byte, error) {
		b := make([]byte, min(size, uint64(max)))
		_, err := f.ReadAt(b, int64(offset))
		return b, err
	}
	_, stroff, strsize := off(shs[shstrndx*shentsize:])
	names, err := read(stroff, strsize, 64<<10)
	if err != nil {
		return nil, err
	}
	for i := range shnum {
		n, offset, size := off(shs[i*shentsize:])
		if n < len(names) && bytes.HasPrefix(names[n:], append([]byte(name), 0)) {
			return read(offset, size, max)
		}
	}
	return nil, fmt.Errorf("no %s section", name)
}
