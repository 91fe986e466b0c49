package notary

import (
	"context"
	"encoding/base64"
	"encoding/json"
)

// X402Challenge is what a payer sees of the 402 it must answer.
type X402Challenge struct {
	URL      string
	Method   string
	Body     []byte
	Response *RawResponse
	Problem  *Problem
}

// PaymentRequirements is one entry of x402 v2 PAYMENT-REQUIRED accepts.
type PaymentRequirements struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	Amount            string         `json:"amount"`
	Asset             string         `json:"asset"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int64          `json:"maxTimeoutSeconds"`
	Extra             map[string]any `json:"extra,omitempty"`
}

// PaymentRequired is the decoded x402 v2 PAYMENT-REQUIRED header.
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Accepts     []PaymentRequirements `json:"accepts"`
	Resource    map[string]any        `json:"resource,omitempty"`
	Error       string                `json:"error,omitempty"`
}

// PaymentRequired decodes the challenge's PAYMENT-REQUIRED header, or returns nil.
func (c *X402Challenge) PaymentRequired() *PaymentRequired {
	header := c.Response.Header.Get("PAYMENT-REQUIRED")
	raw, err := base64.StdEncoding.DecodeString(header)
	if header == "" || err != nil {
		return nil
	}
	var out PaymentRequired
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return &out
}

// X402Payer answers an x402 challenge with the headers of the paid retry: PAYMENT-SIGNATURE (the x402 v2 standard)
// or X-402-Receipt (the interface's flow, after settling through a facilitator).
type X402Payer interface {
	Pay(ctx context.Context, challenge *X402Challenge) (map[string]string, error)
}
