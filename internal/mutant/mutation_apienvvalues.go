//go:build mutation_apienvvalues

// Mutant: the API's answers carry an agent's env values, which are write-only (docs/openapi.yaml names only env_names).
// Guarantee: the HTTP API is the one docs/openapi.yaml describes; secrets are never served
// Caught: ./api TestOpenAPIDocumentMatchesTheServer

package mutant

// APISendsEnvValues sends agents as they are stored.
const APISendsEnvValues = true
