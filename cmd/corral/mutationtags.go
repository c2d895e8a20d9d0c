package main

// mutationTags lists the mutation tags (see .ci/mutations) this program
// was built with; each mutant of this package adds its own. The tests
// build corral again to run it as a real process, with the same tags, so
// that the binary they run carries the mutant too.
var mutationTags []string
