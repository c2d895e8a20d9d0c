// Package setting holds the one rule corral's specs use for numeric
// settings: zero means "the default", a negative value means "none" (off).
package setting

// Or returns def when v is zero (unset), 0 when v is negative (turned off),
// and v otherwise.
func Or[T ~int | ~int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
