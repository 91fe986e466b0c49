package notary

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ReceiptSigningPrefix starts the bytes a receipt's signature covers.
const ReceiptSigningPrefix = "notary-receipt-v1\n"

// Receipt is the signed receipt of a call made with X-Notary-Sign: required.
type Receipt struct {
	Issuer         string `json:"issuer"`
	IssuedAt       string `json:"issued_at"`
	Claim          string `json:"claim"`
	Credits        int64  `json:"credits"`
	KID            string `json:"kid"`
	RequestID      string `json:"request_id"`
	RequestDigest  string `json:"request_digest"`
	ResponseDigest string `json:"response_digest"`
	Signature      string `json:"signature"`
}

// JWK is a public Ed25519 key of a JWKS, with the service's validity window in Unix seconds.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	KID string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
	Nbf *int64 `json:"nbf,omitempty"`
	Exp *int64 `json:"exp,omitempty"`
}

// JWKS is a JSON Web Key Set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// ReceiptCheck is one check of a receipt verification.
type ReceiptCheck struct {
	Name   string
	OK     bool
	Detail string
}

// ReceiptVerification lists every check; Valid when all passed.
type ReceiptVerification struct {
	Valid   bool
	Receipt *Receipt
	Checks  []ReceiptCheck
}

// Failures are the checks that did not pass.
func (v *ReceiptVerification) Failures() []ReceiptCheck {
	var out []ReceiptCheck
	for _, c := range v.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// JWKThumbprint is the RFC 7638 thumbprint of an Ed25519 public key (x in base64url).
func JWKThumbprint(x string) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return b64url(sum[:])
}

// ReceiptSigningInput is the prefix line followed by the JCS of the receipt without its signature.
func ReceiptSigningInput(r Receipt) ([]byte, error) {
	unsigned := map[string]any{
		"issuer": r.Issuer, "issued_at": r.IssuedAt, "claim": r.Claim, "credits": r.Credits, "kid": r.KID,
		"request_id": r.RequestID, "request_digest": r.RequestDigest, "response_digest": r.ResponseDigest,
	}
	canonical, err := CanonicalJSONOf(unsigned)
	if err != nil {
		return nil, err
	}
	return append([]byte(ReceiptSigningPrefix), canonical...), nil
}

// ReceiptLeaf is the receipt log's leaf of a receipt: the JCS of the signed receipt.
func ReceiptLeaf(r Receipt) ([]byte, error) { return CanonicalJSONOf(r) }

// ResponseDigest is SHA-256 of the JCS of a response body (JSON text) without its notary_receipt member.
func ResponseDigest(body []byte) (string, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return "", err
	}
	delete(members, "notary_receipt")
	canonical, err := CanonicalJSONOf(members)
	if err != nil {
		return "", err
	}
	return SHA256Digest(canonical), nil
}

var issuedAtPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$`)
var signaturePattern = regexp.MustCompile(`^ed25519:[A-Za-z0-9_-]{86}$`)

// ParseIssuedAt reads YYYY-MM-DDTHH:MM:SSZ.
func ParseIssuedAt(value string) (time.Time, error) {
	if !issuedAtPattern.MatchString(value) {
		return time.Time{}, fmt.Errorf("%q is not YYYY-MM-DDTHH:MM:SSZ", value)
	}
	return time.Parse("2006-01-02T15:04:05Z", value)
}

// VerifyReceipt verifies a signed response body (JSON text, as received) offline against a JWKS: the key named by
// kid exists and was valid at issued_at, the Ed25519 signature holds, the body is the one signed and, when
// requestBody is not nil, the request body too.
func VerifyReceipt(body []byte, jwks JWKS, requestBody []byte) (*ReceiptVerification, error) {
	var envelope struct {
		Receipt *Receipt `json:"notary_receipt"`
		Salt    *string  `json:"notary_request_salt"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return nil, err
	}
	v := &ReceiptVerification{Receipt: envelope.Receipt}
	add := func(name string, ok bool, detail string) { v.Checks = append(v.Checks, ReceiptCheck{name, ok, detail}) }
	r := envelope.Receipt
	if r == nil || r.KID == "" || r.Signature == "" {
		add("form", false, "the body has no well-formed notary_receipt")
		return v, nil
	}
	issuedAt, errTime := ParseIssuedAt(r.IssuedAt)
	add("form", errTime == nil && signaturePattern.MatchString(r.Signature), "issued_at and signature are well-formed")
	var key *JWK
	for i := range jwks.Keys {
		if jwks.Keys[i].KID == r.KID {
			key = &jwks.Keys[i]
		}
	}
	add("kid", key != nil, "the key "+r.KID+" is published")
	if key != nil && errTime == nil {
		t := issuedAt.Unix()
		valid := (key.Nbf == nil || t >= *key.Nbf) && (key.Exp == nil || t <= *key.Exp)
		add("key_validity", valid, "issued_at is within the key's validity window")
	}
	if key != nil && signaturePattern.MatchString(r.Signature) {
		public, err := unb64url(key.X)
		sig, errSig := unb64url(r.Signature[len("ed25519:"):])
		input, errInput := ReceiptSigningInput(*r)
		ok := err == nil && errSig == nil && errInput == nil && key.Kty == "OKP" && key.Crv == "Ed25519" && len(public) == ed25519.PublicKeySize &&
			ed25519.Verify(ed25519.PublicKey(public), input, sig)
		add("signature", ok, "the Ed25519 signature verifies")
	}
	digest, err := ResponseDigest(body)
	if err != nil {
		return nil, err
	}
	add("response_digest", digest == r.ResponseDigest, "the body is the one signed")
	if requestBody != nil {
		got, err := RequestDigestFor(r.RequestDigest, requestBody, envelope.Salt)
		detail := "the request body is the one signed"
		if err != nil {
			detail = err.Error() + ": keep the response body as received (it holds the salt)"
		}
		add("request_digest", err == nil && got == r.RequestDigest, detail)
	}
	v.Valid = true
	for _, c := range v.Checks {
		v.Valid = v.Valid && c.OK
	}
	return v, nil
}

// RequestDigestFor is the request_digest requestBody gives under the scheme of receiptDigest: version 2
// ("hmac-sha-256=:") is keyed with the salt (the response's notary_request_salt), version 1 ("sha-256=:", issued
// before salts) is plain SHA-256.
func RequestDigestFor(receiptDigest string, requestBody []byte, salt *string) (string, error) {
	if !strings.HasPrefix(receiptDigest, "hmac-sha-256=:") {
		return SHA256Digest(requestBody), nil
	}
	if salt == nil {
		return "", errors.New("no notary_request_salt")
	}
	return SaltedRequestDigest(requestBody, *salt)
}

// ErrInvalidReceipt is returned by helpers that need a valid receipt.
var ErrInvalidReceipt = errors.New("notary: the receipt does not verify")
