package sandbox

import (
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// bpfProg assembles a classic BPF program with named jump targets, so that
// the seccomp filter reads as a list of rules rather than a table of
// hand-counted offsets.
type bpfProg struct {
	ins    []unix.SockFilter
	labels map[string]int
	jumps  []bpfJump
}

// bpfJump is a reference to a label from instruction at; cond jumps carry
// a true and a false target ("" meaning the next instruction), JA one.
type bpfJump struct {
	at        int
	jt, jf, k string
}

func (b *bpfProg) emit(code uint16, k uint32) {
	b.ins = append(b.ins, unix.SockFilter{Code: code, K: k})
}

// load loads the 32-bit word at offset off of struct seccomp_data.
func (b *bpfProg) load(off uint32) { b.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }

// and masks the accumulator with k.
func (b *bpfProg) and(k uint32) { b.emit(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, k) }

// ret ends the program with action k.
func (b *bpfProg) ret(k uint32) { b.emit(unix.BPF_RET|unix.BPF_K, k) }

// jeq jumps to jt when the accumulator equals k, else to jf.
func (b *bpfProg) jeq(k uint32, jt, jf string) { b.cond(unix.BPF_JEQ, k, jt, jf) }

// jset jumps to jt when the accumulator has any bit of k set, else to jf.
func (b *bpfProg) jset(k uint32, jt, jf string) { b.cond(unix.BPF_JSET, k, jt, jf) }

func (b *bpfProg) cond(op uint16, k uint32, jt, jf string) {
	b.jumps = append(b.jumps, bpfJump{at: len(b.ins), jt: jt, jf: jf})
	b.emit(unix.BPF_JMP|op|unix.BPF_K, k)
}

// jump jumps to label unconditionally.
func (b *bpfProg) jump(label string) {
	b.jumps = append(b.jumps, bpfJump{at: len(b.ins), k: label})
	b.emit(unix.BPF_JMP|unix.BPF_JA, 0)
}

// label names the next instruction.
func (b *bpfProg) label(name string) {
	if b.labels == nil {
		b.labels = map[string]int{}
	}
	b.labels[name] = len(b.ins)
}

// assemble resolves the jumps. Classic BPF only jumps forward, conditional
// jumps at most 255 instructions.
func (b *bpfProg) assemble() ([]unix.SockFilter, error) {
	offset := func(from int, label string, max int) (int, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := b.labels[label]
		if !ok {
			return 0, fmt.Errorf("bpf: no label %q", label)
		}
		d := to - from - 1
		if d < 0 || d > max {
			return 0, fmt.Errorf("bpf: jump from %d to %q (%d) out of range", from, label, to)
		}
		return d, nil
	}
	for _, j := range b.jumps {
		if j.k != "" {
			d, err := offset(j.at, j.k, math.MaxInt32)
			if err != nil {
				return nil, err
			}
			b.ins[j.at].K = uint32(d)
			continue
		}
		t, err := offset(j.at, j.jt, 255)
		if err != nil {
			return nil, err
		}
		f, err := offset(j.at, j.jf, 255)
		if err != nil {
			return nil, err
		}
		b.ins[j.at].Jt, b.ins[j.at].Jf = uint8(t), uint8(f)
	}
	return b.ins, nil
}
