package secret

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// The process's own blocks, as /proc/self/stat gives their addresses
// (fields 48 to 51: arg_start, arg_end, env_start, env_end).
const (
	fieldArgStart = 48
	fieldEnvStart = 50
)

// scrubEnv overwrites the entry name=value of the environment block.
func scrubEnv(name, value string) error {
	return scrub("/proc/self/environ", fieldEnvStart, []byte(name+"="+value))
}

// scrubArg overwrites value where it is an argument, or follows the "="
// of one, in the command line.
func scrubArg(value string) error {
	return scrub("/proc/self/cmdline", fieldArgStart, []byte(value))
}

// scrub overwrites with NUL bytes every occurrence of secret in the block
// that view shows and whose start address is field of /proc/self/stat,
// writing through /proc/self/mem; an occurrence counts when it begins an
// entry or follows an "=", and ends one. It then reads the block again to
// check that the secret is gone.
func scrub(view string, field int, secret []byte) error {
	block, err := os.ReadFile(view)
	if err != nil {
		return err
	}
	start, err := statField(field)
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	zeros := make([]byte, len(secret))
	for _, off := range occurrences(block, secret) {
		if _, err := mem.WriteAt(zeros, int64(start)+int64(off)); err != nil {
			return fmt.Errorf("overwriting the secret: %w", err)
		}
	}
	after, err := os.ReadFile(view)
	if err != nil {
		return err
	}
	if len(occurrences(after, secret)) > 0 {
		return errors.New("the secret is still there after it was overwritten")
	}
	return nil
}

// occurrences returns the offsets of secret in block where it begins an
// entry or follows an "=", and ends an entry.
func occurrences(block, secret []byte) []int {
	var out []int
	for i := 0; ; {
		j := bytes.Index(block[i:], secret)
		if j < 0 {
			return out
		}
		at := i + j
		end := at + len(secret)
		begins := at == 0 || block[at-1] == 0 || block[at-1] == '='
		ends := end == len(block) || block[end] == 0
		if begins && ends {
			out = append(out, at)
		}
		i = at + 1
	}
}

// statField returns field n (counted from 1) of /proc/self/stat.
func statField(n int) (uint64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc/self/stat")
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < n-2 {
		return 0, fmt.Errorf("/proc/self/stat has no field %d (Linux before 3.5)", n)
	}
	return strconv.ParseUint(string(f[n-3]), 10, 64)
}
