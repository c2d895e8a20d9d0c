package shim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
)

// Messages and a run's configuration travel in a compact binary form of
// their own: corral and the shim are built from the same source (shimprog
// checks it), and encoding/json's first use of a type, which builds its
// encoder by reflection, cost every process that starts a run or is its
// init most of a millisecond of CPU, once per message type and once for
// the configuration. Fields go in the order of their declaration; an
// integer is a varint, a string its length and its bytes, a list its
// length and its items, a bool a byte, a pointer a presence byte and,
// when present, its fields, a map its length and its pairs, keys in order.

// msgMagic opens every message: a byte no message of another form begins
// with.
const msgMagic = 0xC5

// marshal appends m's binary form to b.
func (m *Msg) marshal(b []byte) []byte {
	b = append(b, msgMagic)
	b = appendString(b, m.Op)
	b = binary.AppendVarint(b, int64(m.Pid))
	b = binary.AppendUvarint(b, m.Start)
	b = binary.AppendVarint(b, int64(m.Code))
	b = binary.AppendVarint(b, int64(m.Signal))
	b = appendBool(b, m.Alone)
	b = binary.AppendVarint(b, int64(m.Killed))
	b = appendString(b, m.Stage)
	b = binary.AppendVarint(b, int64(m.Errno))
	b = appendString(b, m.Err)
	b = appendStrings(b, m.Mechanisms)
	b = binary.AppendVarint(b, int64(m.LandlockABI))
	return b
}

// unmarshal reads m from b, all of it: a message cut short, with bytes
// left over or of another form is an error.
func (m *Msg) unmarshal(b []byte) error {
	if len(b) == 0 || b[0] != msgMagic {
		return errors.New("not a control message")
	}
	d := decoder{b: b[1:]}
	*m = Msg{
		Op:     d.string(),
		Pid:    d.int(),
		Start:  d.uint(),
		Code:   d.int(),
		Signal: d.int(),
		Alone:  d.bool(),
		Killed: d.int(),
		Stage:  d.string(),
		Errno:  d.int(),
		Err:    d.string(),

		Mechanisms:  d.strings(),
		LandlockABI: d.int(),
	}
	return d.end()
}

// configMagic opens every configuration.
const configMagic = 0xC6

// marshal appends c's binary form to b.
func (c *Config) marshal(b []byte) []byte {
	b = append(b, configMagic)
	b = appendBool(b, c.Policy != nil)
	if p := c.Policy; p != nil {
		b = appendString(b, string(p.Mode))
		b = appendString(b, p.Workdir)
		b = appendStrings(b, p.Writable)
		b = appendStrings(b, p.DenyRead)
		b = appendString(b, string(p.Network))
		b = appendStrings(b, p.Private)
		b = appendStrings(b, p.AllowUnixSockets)
		b = appendString(b, p.TmpDir)
		b = binary.AppendVarint(b, int64(p.ProxyPort))
		b = binary.AppendUvarint(b, uint64(len(p.Loopback)))
		for _, l := range p.Loopback {
			b = binary.AppendVarint(b, int64(l.Port))
			b = appendString(b, l.IP)
			b = appendBool(b, l.Localhost)
		}
		b = appendBool(b, p.Guard != nil)
		if g := p.Guard; g != nil {
			b = appendStrings(b, g.Hide)
			b = appendBool(b, g.Host != nil)
			b = binary.AppendUvarint(b, uint64(len(g.Host)))
			for _, k := range slices.Sorted(maps.Keys(g.Host)) {
				b = appendString(b, k)
				b = appendString(b, g.Host[k])
			}
		}
	}
	b = appendBool(b, c.Confined)
	b = appendBool(b, c.Ack)
	b = appendString(b, c.Path)
	b = appendStrings(b, c.Args)
	b = appendStrings(b, c.Env)
	b = appendString(b, c.Dir)
	b = appendBool(b, c.ShareGroup)
	b = binary.AppendUvarint(b, uint64(len(c.Ignore)))
	for _, sig := range c.Ignore {
		b = binary.AppendVarint(b, int64(sig))
	}
	b = appendBool(b, c.OneShot)
	b = appendBool(b, c.Plan != nil)
	if n := c.Plan; n != nil {
		b = appendString(b, n.GoInit)
		b = appendStrings(b, n.Roots)
		b = appendString(b, n.TmpDir)
		b = appendStrings(b, n.Keep)
		b = appendStrings(b, n.Deny)
		b = appendBool(b, n.NetNone)
		b = binary.AppendUvarint(b, n.Handled)
		b = binary.AppendUvarint(b, n.Scoped)
		b = binary.AppendUvarint(b, n.FileRights)
		b = binary.AppendUvarint(b, uint64(len(n.Rules)))
		for _, r := range n.Rules {
			b = appendString(b, r.Path)
			b = binary.AppendUvarint(b, r.Rights)
			b = appendBool(b, r.Optional)
		}
		b = appendString(b, string(n.Filter))
		b = appendBool(b, n.Gate)
		b = appendStrings(b, n.Mechanisms)
		b = binary.AppendVarint(b, int64(n.LandlockABI))
		b = appendBool(b, n.Proxy)
		b = binary.AppendUvarint(b, uint64(len(n.Listeners)))
		for _, l := range n.Listeners {
			b = appendString(b, string(l.Addr))
			b = binary.AppendUvarint(b, uint64(l.Port))
			b = appendBool(b, l.Optional)
		}
		b = appendStrings(b, n.Sockets)
	}
	return b
}

// unmarshal reads c from b, all of it.
func (c *Config) unmarshal(b []byte) error {
	if len(b) == 0 || b[0] != configMagic {
		return errors.New("not a run's configuration")
	}
	d := decoder{b: b[1:]}
	*c = Config{}
	if d.bool() {
		p := &sandbox.Policy{
			Mode:             d.mode(),
			Workdir:          d.string(),
			Writable:         d.strings(),
			DenyRead:         d.strings(),
			Network:          d.network(),
			Private:          d.strings(),
			AllowUnixSockets: d.strings(),
			TmpDir:           d.string(),
			ProxyPort:        d.int(),
		}
		if n := d.count(); n > 0 {
			p.Loopback = make([]sandbox.LoopbackPort, n)
			for i := range p.Loopback {
				p.Loopback[i] = sandbox.LoopbackPort{Port: d.int(), IP: d.string(), Localhost: d.bool()}
			}
		}
		if d.bool() {
			g := &sandbox.Guard{Hide: d.strings()}
			hasHost, n := d.bool(), d.count()
			switch {
			case hasHost:
				g.Host = make(map[string]string, n)
				for range n {
					k := d.string()
					g.Host[k] = d.string()
				}
			case n > 0:
				d.fail() // pairs of no map
			}
			p.Guard = g
		}
		c.Policy = p
	}
	c.Confined = d.bool()
	c.Ack = d.bool()
	c.Path = d.string()
	c.Args = d.strings()
	c.Env = d.strings()
	c.Dir = d.string()
	c.ShareGroup = d.bool()
	if n := d.count(); n > 0 {
		c.Ignore = make([]int, n)
		for i := range c.Ignore {
			c.Ignore[i] = d.int()
		}
	}
	c.OneShot = d.bool()
	if d.bool() {
		n := &sandbox.NativePlan{
			GoInit: d.string(), Roots: d.strings(), TmpDir: d.string(), Keep: d.strings(), Deny: d.strings(),
			NetNone: d.bool(), Handled: d.uint(), Scoped: d.uint(), FileRights: d.uint(),
		}
		if k := d.count(); k > 0 {
			n.Rules = make([]sandbox.NativeRule, k)
			for i := range n.Rules {
				n.Rules[i] = sandbox.NativeRule{Path: d.string(), Rights: d.uint(), Optional: d.bool()}
			}
		}
		n.Filter = []byte(d.string())
		n.Gate = d.bool()
		n.Mechanisms = d.strings()
		n.LandlockABI = d.int()
		n.Proxy = d.bool()
		if k := d.count(); k > 0 {
			n.Listeners = make([]sandbox.NativeListener, k)
			for i := range n.Listeners {
				n.Listeners[i] = sandbox.NativeListener{Addr: []byte(d.string()), Port: int(d.uint()), Optional: d.bool()}
			}
		}
		n.Sockets = d.strings()
		c.Plan = n
	}
	return d.end()
}

// mode reads a sandbox mode, one corral knows.
func (d *decoder) mode() corral.SandboxMode {
	m, err := corral.ParseSandboxMode(d.string())
	if err != nil && d.err == nil {
		d.err = err
	}
	return m
}

// network reads a network setting, one corral knows.
func (d *decoder) network() corral.Network {
	n, err := corral.ParseNetwork(d.string())
	if err != nil && d.err == nil {
		d.err = err
	}
	return n
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, list []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(list)))
	for _, s := range list {
		b = appendString(b, s)
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decoder reads a message's fields in order; after its first error every
// read returns the zero value, and err says what went wrong.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("cut short")
	}
	d.b = nil
}

// end is the decoder's error, or one when bytes are left past the end.
func (d *decoder) end() error {
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes past its end", len(d.b))
	}
	return d.err
}

// count reads the length of a string, or of a list whose items take a
// byte at least each: a length past what is left is an error, not an
// allocation.
func (d *decoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

// strings reads a list of strings; an empty list is nil.
func (d *decoder) strings() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	list := make([]string, n)
	for i := range list {
		list[i] = d.string()
	}
	return list
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 || int64(int(v)) != v {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

func (d *decoder) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) == 0 || d.b[0] > 1 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *decoder) string() string {
	n := d.count() // its bytes: as many as are left at most
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
