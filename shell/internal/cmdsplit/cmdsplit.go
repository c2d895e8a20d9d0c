// Package cmdsplit cuts a shell command into what a policy judges: its
// lines and its segments, one per simple command wherever it stands (after
// ;, &&, ||, | or &, inside $(...), backquotes, <(...), subshells, braces,
// if/while/for/case bodies and function bodies).
//
// A bash parser finds the segments, so quotes, escapes and here-documents
// are read as the shell reads them: a ";" inside quotes does not cut, and
// the body of a here-document is data, not commands. A command the parser
// cannot read (a syntax error, another shell's syntax) is cut by a
// conservative scanner instead, which splits on every separator outside
// quotes; the result then says Parsed is false.
package cmdsplit

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Segment is one simple command of a command line.
type Segment struct {
	// Text is the command's source, leading assignments included
	// ("FOO=1 make test"), without redirections.
	Text string
	// Words is the command itself without leading assignments ("make
	// test"); it equals Text when there are none.
	Words string
	// Line is the 1-based line of the command line the segment starts on.
	Line int
}

// Split returns the segments and the non-empty lines of command.
func Split(command string) (segs []Segment, lines []string, parsed bool) {
	for _, l := range strings.Split(command, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false)).Parse(strings.NewReader(command), "")
	if err != nil {
		return scan(command), lines, false
	}
	src := command
	text := func(from, to syntax.Pos) string {
		a, b := int(from.Offset()), int(to.Offset())
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return strings.TrimSpace(src[a:b])
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		var s Segment
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 && len(n.Assigns) == 0 {
				return true
			}
			s.Text = text(n.Pos(), n.End())
			if len(n.Args) > 0 {
				s.Words = text(n.Args[0].Pos(), n.Args[len(n.Args)-1].End())
			} else {
				s.Words = s.Text
			}
			s.Line = int(n.Pos().Line())
		case *syntax.DeclClause, *syntax.LetClause, *syntax.TestClause, *syntax.ArithmCmd:
			s.Text = text(n.Pos(), n.End())
			s.Words = s.Text
			s.Line = int(n.Pos().Line())
		default:
			return true
		}
		if s.Text != "" {
			segs = append(segs, s)
		}
		return true
	})
	return segs, lines, true
}

// scan splits on newlines, ;, &, | and the insides of $( ) and backquotes,
// outside single and double quotes. It over-splits rather than under-splits.
func scan(command string) []Segment {
	var segs []Segment
	var cur strings.Builder
	line, start := 1, 1
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			segs = append(segs, Segment{Text: t, Words: stripAssigns(t), Line: start})
		}
		cur.Reset()
		start = line
	}
	var quote byte
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
			cur.WriteByte(c)
			continue
		case c == '\\' && i+1 < len(command):
			cur.WriteByte(c)
			cur.WriteByte(command[i+1])
			if command[i+1] == '\n' {
				line++
			}
			i++
			continue
		case quote == '"' && c == '"':
			quote = 0
			cur.WriteByte(c)
			continue
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
			cur.WriteByte(c)
			continue
		}
		switch c {
		case '\n':
			line++
			if quote == 0 {
				flush()
				continue
			}
		case ';', '&', '|', '`', '(', ')', '{', '}':
			if quote == 0 || c == '`' || c == '(' || c == ')' {
				flush()
				continue
			}
		case '$':
			if i+1 < len(command) && command[i+1] == '(' {
				flush()
				i++
				continue
			}
		}
		cur.WriteByte(c)
	}
	flush()
	return segs
}

// stripAssigns drops leading NAME=value words.
func stripAssigns(s string) string {
	for {
		f := strings.Fields(s)
		if len(f) == 0 {
			return s
		}
		k, _, ok := strings.Cut(f[0], "=")
		if !ok || k == "" || !isName(k) {
			return s
		}
		s = strings.TrimSpace(strings.TrimPrefix(s, f[0]))
	}
}

func isName(s string) bool {
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}
