package notary

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sentinels of every error class: test with errors.Is(err, notary.ErrRateLimited).
var (
	ErrBadRequest       = errors.New("notary: bad request")       // 400, 413, 415, 431
	ErrAuthentication   = errors.New("notary: authentication")    // 401
	ErrPaymentRequired  = errors.New("notary: payment required")  // 402
	ErrPermissionDenied = errors.New("notary: permission denied") // 403 (e.g. collection_forbidden)
	ErrNotFound         = errors.New("notary: not found")         // 404 (e.g. collection_not_found), 405
	ErrConflict         = errors.New("notary: conflict")          // 409, 422 idempotency_key_reused
	ErrUnprocessable    = errors.New("notary: unprocessable")     // 422
	ErrRateLimited      = errors.New("notary: rate limited")      // 429
	ErrServer           = errors.New("notary: server error")      // 5xx, 408
	ErrConnection       = errors.New("notary: connection failed") // refused, reset, DNS
	ErrTimeout          = errors.New("notary: timed out")         // no complete answer in time
)

// Problem is an RFC 9457 problem as notary writes it.
type Problem struct {
	Type       string                    `json:"type"`
	Title      string                    `json:"title"`
	Status     int                       `json:"status"`
	Detail     string                    `json:"detail"`
	Code       string                    `json:"code"`
	RequestID  string                    `json:"request_id"`
	Retryable  bool                      `json:"retryable"`
	Price      *Price                    `json:"price,omitempty"`
	Challenges map[string]map[string]any `json:"challenges,omitempty"`
	// Collection is the collection named by a collection_not_found or collection_forbidden problem.
	Collection string `json:"collection,omitempty"`
}

// Price is the quote of a call a 401/402 carries.
type Price struct {
	Credits int64  `json:"credits"`
	Amount  string `json:"amount"`
	Asset   string `json:"asset"`
}

// APIError is a problem answered by the service. Code is stable: switch on it.
type APIError struct {
	Status    int
	Code      string
	RequestID string
	Retryable bool
	Problem   *Problem
	Raw       *RawResponse
	class     error
}

func (e *APIError) Error() string {
	detail := ""
	if e.Problem != nil {
		detail = e.Problem.Detail
	}
	return fmt.Sprintf("notary: %d %s: %s", e.Status, e.Code, detail)
}

// Is matches the error class sentinel.
func (e *APIError) Is(target error) bool { return target == e.class }

// RetryAfter is what a 429 (or 503) asked the client to wait; 0 when absent.
func (e *APIError) RetryAfter() time.Duration {
	return retryAfter(e.Raw.Header.Get("Retry-After"), time.Now())
}

// TransportError is a failed exchange (connection or timeout) after the retries ran out.
type TransportError struct {
	Timeout bool
	Err     error
}

func (e *TransportError) Error() string {
	if e.Timeout {
		return "notary: timed out: " + e.Err.Error()
	}
	return "notary: connection failed: " + e.Err.Error()
}

func (e *TransportError) Unwrap() error { return e.Err }

// Is matches ErrTimeout or ErrConnection.
func (e *TransportError) Is(target error) bool {
	return (e.Timeout && target == ErrTimeout) || (!e.Timeout && target == ErrConnection)
}

func classOf(status int, code string) error {
	switch {
	case status == 401:
		return ErrAuthentication
	case status == 402:
		return ErrPaymentRequired
	case status == 403:
		return ErrPermissionDenied
	case status == 404 || status == 405:
		return ErrNotFound
	case status == 409 || code == "idempotency_key_reused":
		return ErrConflict
	case status == 422:
		return ErrUnprocessable
	case status == 429:
		return ErrRateLimited
	case status == 408 || status >= 500:
		return ErrServer
	default:
		return ErrBadRequest
	}
}

func newAPIError(raw *RawResponse, problem *Problem) *APIError {
	e := &APIError{Status: raw.Status, Code: fmt.Sprintf("http_%d", raw.Status), RequestID: raw.Header.Get("X-Request-Id"), Retryable: raw.Status >= 500, Problem: problem, Raw: raw}
	if problem != nil && problem.Code != "" {
		e.Code, e.Retryable = problem.Code, problem.Retryable
		if problem.RequestID != "" {
			e.RequestID = problem.RequestID
		}
	}
	e.class = classOf(raw.Status, e.Code)
	return e
}

// retryAfter reads delay-seconds or an HTTP date.
func retryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if seconds, err := strconv.Atoi(value); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second
	}
	if at, err := http.ParseTime(value); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}
