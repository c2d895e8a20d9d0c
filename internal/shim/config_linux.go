package shim

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
)

// A run's configuration travels in the binary form of messages
// (msg_linux.go), for the same reason: it is encoded once in corral and
// decoded once in the init, each the first use of its types in a process
// that lives for one run. Fields go in the order of their declaration; a
// pointer is a presence byte and, when present, its fields; a map its
// length and its pairs, keys in order.

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
