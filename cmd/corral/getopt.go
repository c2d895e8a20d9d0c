package main

import (
	"fmt"
	"strings"
)

// gnuOption is one option of a GNU-style command line: a short letter
// (0 for none), a long name, and whether it takes an argument.
type gnuOption struct {
	short  byte
	long   string
	hasArg bool
}

// gnuArgs reads a command line as glibc's getopt_long does with a leading
// "+" in its option string: options come first and stop at the first
// operand or at "--"; short options cluster ("-pv", "-sKILL", "-k 5");
// long ones take "--name=ARG" or "--name ARG" and may be shortened to any
// unique prefix. Its errors are getopt's messages.
type gnuArgs struct {
	prog string
	opts []gnuOption
	args []string
	i    int    // next element of args
	rest string // the rest of a cluster of short options
}

// next returns the next option and its argument; ok is false once the
// options are over (the operands are then args[i:]).
func (g *gnuArgs) next() (opt *gnuOption, arg string, ok bool, err error) {
	if g.rest != "" {
		return g.short()
	}
	if g.i >= len(g.args) {
		return nil, "", false, nil
	}
	a := g.args[g.i]
	switch {
	case a == "--":
		g.i++
		return nil, "", false, nil
	case strings.HasPrefix(a, "--"):
		g.i++
		return g.long(a[2:])
	case len(a) > 1 && a[0] == '-':
		g.i++
		g.rest = a[1:]
		return g.short()
	}
	return nil, "", false, nil
}

func (g *gnuArgs) short() (*gnuOption, string, bool, error) {
	c := g.rest[0]
	g.rest = g.rest[1:]
	for k := range g.opts {
		o := &g.opts[k]
		if o.short != c || c == 0 {
			continue
		}
		if !o.hasArg {
			return o, "", true, nil
		}
		if g.rest != "" {
			arg := g.rest
			g.rest = ""
			return o, arg, true, nil
		}
		if g.i >= len(g.args) {
			return nil, "", false, fmt.Errorf("%s: option requires an argument -- '%c'", g.prog, c)
		}
		g.i++
		return o, g.args[g.i-1], true, nil
	}
	g.rest = ""
	return nil, "", false, fmt.Errorf("%s: invalid option -- '%c'", g.prog, c)
}

func (g *gnuArgs) long(s string) (*gnuOption, string, bool, error) {
	name, arg, hasEq := strings.Cut(s, "=")
	o, err := g.findLong(name, s)
	if err != nil {
		return nil, "", false, err
	}
	switch {
	case hasEq && !o.hasArg:
		return nil, "", false, fmt.Errorf("%s: option '--%s' doesn't allow an argument", g.prog, o.long)
	case hasEq || !o.hasArg:
		return o, arg, true, nil
	case g.i >= len(g.args):
		return nil, "", false, fmt.Errorf("%s: option '--%s' requires an argument", g.prog, o.long)
	}
	g.i++
	return o, g.args[g.i-1], true, nil
}

// findLong finds the long option name names: exactly, or as the one
// option it is a prefix of.
func (g *gnuArgs) findLong(name, whole string) (*gnuOption, error) {
	var found []*gnuOption
	for k := range g.opts {
		o := &g.opts[k]
		if o.long == name {
			return o, nil
		}
		if strings.HasPrefix(o.long, name) {
			found = append(found, o)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0:
		return nil, fmt.Errorf("%s: unrecognized option '--%s'", g.prog, whole)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: option '--%s' is ambiguous; possibilities:", g.prog, whole)
	for _, o := range found {
		fmt.Fprintf(&b, " '--%s'", o.long)
	}
	return nil, fmt.Errorf("%s", b.String())
}
