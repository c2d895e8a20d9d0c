package redact

import "sync"

// set is a set of bytes.
type set [256]bool

// notIn is the set of the bytes not in s.
func notIn(s string) *set {
	t := *byteSet(s)
	for i := range t {
		t[i] = !t[i]
	}
	return &t
}

func byteSet(s string) *set {
	var t set
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return &t
}

const (
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	digits  = "0123456789"
)

// The byte sets the detectors read, made on first use (ensureTables): made
// at package initialisation, they cost every program that links this
// package, the corral CLI among them, at every start.
var (
	alnum, word, tokenBytes, dotted, slack, upperDigit, base64, azure    *set
	bearerBytes, nameBytes, flagName, blank, argStart, valueStop         *set
	valueWord, schemeBytes, lineMarker, headerStop, urlUserStop, pemBody *set
)

// tables makes the package's tables once.
var tables sync.Once

// ensureTables makes the tables if they are not made yet: every entry
// point into the detectors calls it.
func ensureTables() { tables.Do(makeTables) }

func makeTables() {
	alnum = byteSet(letters + digits)
	word = byteSet(letters + digits + "_")
	tokenBytes = byteSet(letters + digits + "_-")
	dotted = byteSet(letters + digits + "_-.")
	slack = byteSet(letters + digits + "-")
	upperDigit = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZ" + digits)
	base64 = byteSet(letters + digits + "+/")
	azure = byteSet(letters + digits + "_~.-")
	bearerBytes = byteSet(letters + digits + "._~+/=-")
	nameBytes = byteSet(letters + digits + "_.-")
	flagName = byteSet(letters + digits + "_-")
	blank = byteSet(" \t")
	// argStart may come before an option.
	argStart = byteSet(" \t\r\n\"'(")
	// valueStop ends a value given without quotes.
	valueStop = byteSet(" \t\r\n\"',;&\\)}]<>`|")
	// valueWord holds the bytes of a value given without quotes: a call's
	// '(' and an index's '[' end it too.
	valueWord = notIn(" \t\r\n\"',;&\\)}]<>`|([")
	// schemeBytes make an HTTP authentication scheme's name.
	schemeBytes = byteSet(letters + digits + "-")
	// lineMarker may stand before a name that begins a line.
	lineMarker = byteSet("-+*#><")
	// headerStop ends a header's value: the line, or the quoted string
	// the header is written in.
	headerStop = byteSet("\r\n\"'\\")
	// urlUserStop ends what may be the user:password@ of a URL.
	urlUserStop = byteSet(" \t\r\n/?#\"'<>\\[]`")
	pemBody = byteSet(pemBodyBytes)
	lineWord = [...]*set{
		plainLine:    notIn(" \t\r\n"),
		singleQuoted: notIn(" \t\r\n'"),
		jsonString:   notIn(" \t\r\n\"\\"),
	}
	nameRules = makeNameRules()
	tokenShapes = makeTokenShapes()
}
