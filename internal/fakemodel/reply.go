package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Scenario decides the model's reply to a request. It is called from the
// request's own goroutine, possibly concurrently with other requests.
type Scenario func(*Request) Reply

// Reply is what the model answers to one request.
type Reply struct {
	// Text is the model's answer in words (may be empty when it calls
	// tools).
	Text string
	// Calls are tool calls the model makes after its text.
	Calls []Call
	// Fail answers with the API's error for that failure instead (an HTTP
	// error, or with InStream an error event in a started stream).
	Fail Failure
	// RetryAfter is sent in the retry-after header of a rate_limit or
	// overloaded failure; zero sends none.
	RetryAfter time.Duration
	// InStream sends Fail as an error event after the stream started
	// (Anthropic's error event, OpenAI's response.failed).
	InStream bool
	// Hang starts the stream (and the text, if any) and then sends
	// nothing more until the agent gives up or the server closes.
	Hang bool
	// Garbage answers 200 with a body that is no stream of the API.
	Garbage bool
	// Delay waits before answering at all.
	Delay time.Duration
	// Usage is the token count reported; the zero value reports
	// DefaultUsage.
	Usage Usage
}

// Call is a tool call the model makes.
type Call struct {
	// Name is the tool's name as offered ("Bash", "exec_command",
	// "mcp__corral__run_command"). For a tool in a Responses API
	// namespace, Namespace names it ("multi_agent_v1").
	Name      string
	Namespace string
	// Input is the call's input object, encoded to JSON.
	Input any
}

// Usage is a token count as the APIs report it.
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
}

// DefaultUsage is the usage of a reply that does not set one: every
// field non-zero, so that a test sees each one carried through.
var DefaultUsage = Usage{Input: 100, Output: 20, CacheRead: 30, CacheWrite: 40}

// Failure is a failure of the model API, answered in each API's own
// words and status codes.
type Failure string

const (
	// FailAuth: 401, the API key is not valid.
	FailAuth Failure = "auth"
	// FailRateLimit: 429, too many requests (retry-after: RetryAfter).
	FailRateLimit Failure = "rate_limit"
	// FailQuota: the account has no credit or quota left (Anthropic: 400
	// "credit balance is too low"; OpenAI: 429 insufficient_quota).
	FailQuota Failure = "quota"
	// FailOverloaded: Anthropic's 529 overloaded_error, OpenAI's 503.
	FailOverloaded Failure = "overloaded"
	// FailServer: 500, an internal error.
	FailServer Failure = "server"
	// FailModel: 404, the model does not exist.
	FailModel Failure = "model"

	failBadRequest Failure = "bad_request"
)

// apiError is one failure as an API states it.
type apiError struct {
	status  int
	typ     string // Anthropic error.type, OpenAI error.type
	code    string // OpenAI error.code
	message string
}

func failureOf(api API, f Failure, detail string) apiError {
	a := api == Anthropic
	switch f {
	case FailAuth:
		if a {
			return apiError{401, "authentication_error", "", "invalid x-api-key"}
		}
		return apiError{401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-fake***key. You can find your API key at https://platform.openai.com/account/api-keys."}
	case FailRateLimit:
		if a {
			return apiError{429, "rate_limit_error", "", "This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."}
		}
		return apiError{429, "requests", "rate_limit_exceeded", "Rate limit reached for requests per min (RPM): Limit 50, Used 50, Requested 1. Please try again in 1s."}
	case FailQuota:
		if a {
			return apiError{400, "invalid_request_error", "", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}
		}
		return apiError{429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."}
	case FailOverloaded:
		if a {
			return apiError{529, "overloaded_error", "", "Overloaded"}
		}
		return apiError{503, "server_error", "server_is_overloaded", "The server is overloaded. Please try again later."}
	case FailServer:
		if a {
			return apiError{500, "api_error", "", "Internal server error"}
		}
		return apiError{500, "server_error", "", "The server had an error while processing your request. Sorry about that!"}
	case FailModel:
		if a {
			return apiError{404, "not_found_error", "", "model: " + detail}
		}
		return apiError{404, "invalid_request_error", "model_not_found", "The model `" + detail + "` does not exist or you do not have access to it."}
	case failBadRequest:
		return apiError{400, "invalid_request_error", "", detail}
	}
	return apiError{404, "not_found_error", "", "not found: " + detail}
}

// writeError answers with the API's error body for f.
func writeError(w http.ResponseWriter, api API, f Failure, retryAfter time.Duration, detail string) {
	e := failureOf(api, f, detail)
	w.Header().Set("Content-Type", "application/json")
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((retryAfter+time.Second-1)/time.Second)))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	if api == Anthropic {
		w.Header().Set("Request-Id", "req_fake")
	}
	w.WriteHeader(e.status)
	json.NewEncoder(w).Encode(e.body(api))
}

func (e apiError) body(api API) any {
	if api == Anthropic {
		return map[string]any{"type": "error", "error": map[string]any{"type": e.typ, "message": e.message}, "request_id": "req_fake"}
	}
	var code any
	if e.code != "" {
		code = e.code
	}
	return map[string]any{"error": map[string]any{"message": e.message, "type": e.typ, "param": nil, "code": code}}
}

func (u Usage) orDefault() Usage {
	if u == (Usage{}) {
		return DefaultUsage
	}
	return u
}

func callID(api API, step, i int) string {
	if api == Anthropic {
		return fmt.Sprintf("toolu_fake_%02d_%d", step, i)
	}
	return fmt.Sprintf("call_fake_%02d_%d", step, i)
}

func inputJSON(in any) string {
	if in == nil {
		return "{}"
	}
	b, err := json.Marshal(in)
	if err != nil {
		return "{}"
	}
	return string(b)
}
