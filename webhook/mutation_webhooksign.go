//go:build mutation_webhooksign

// Mutant: webhook deliveries are signed with the wrong key, so no receiver can trust them.
// Guarantee: webhooks arrive signed (HMAC-SHA256 over the timestamp and body)
// Caught: ./service TestWebhooksArriveSignedInOrderThroughAReceiverThatHangsOrFails
// Caught: ./webhook TestWebhookSignatureIsStripesScheme

package webhook

// signMutant corrupts the signing key.
const signMutant = "-mutated"
