// Package capture keeps bounded output: the head and tail of a stream within
// a byte cap, a count of everything seen, an optional spill file holding the
// whole stream, and line splitting with a bound on line length.
//
// Memory stays near the cap however much is written: a [Buffer] with a 1 MiB
// cap holds at most 1 MiB of a 200 GB stream, and grows to it only as bytes
// arrive.
package capture
