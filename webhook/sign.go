//go:build !mutation_webhooksign

package webhook

// signMutant is what the mutation step appends to a webhook's secret
// (mutation_webhooksign.go): nothing.
const signMutant = ""
