//go:build !mutation_guardproc

package sandbox

// procReadOnly are the parts of /proc a root run sees read-only.
var procReadOnly = []string{"sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "mtrr"}
