//go:build mutation_retryall

// Mutant: the retry policy retries every failure, authentication failures included.
// Guarantee: 9. retries never repeat what cannot pass
// Caught: ./service TestRateLimitIsRetriedAtTheResetTimeAndAuthNever

package mutant

// RetryAll makes every failure retryable.
const RetryAll = true
