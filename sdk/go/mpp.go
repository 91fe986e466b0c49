package notary

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// EnvelopeSigningPrefix starts the bytes every MPP party signs.
const EnvelopeSigningPrefix = "mpp-envelope-v1\n"

// MaxEnvelopeLifetime is the wire format's ceiling on an envelope's lifetime.
const MaxEnvelopeLifetime = 300 * time.Second

var sharePattern = regexp.MustCompile(`^(0|[1-9]\d*)(\.\d{1,6})?$`)

const shareScale = 1_000_000

// MPPParty is a paying party: its tenant name, its share (a decimal string, at most 6 decimals) and its Ed25519 key.
type MPPParty struct {
	Party      string
	Share      string
	PrivateKey ed25519.PrivateKey
}

// EnvelopeParty is one party as the envelope lists it.
type EnvelopeParty struct {
	Party string `json:"party"`
	KID   string `json:"kid"`
	Share string `json:"share"`
}

// EnvelopeAuthorization is one party's signature.
type EnvelopeAuthorization struct {
	Party string `json:"party"`
	Sig   string `json:"sig"`
}

// Envelope is the MPP envelope (field-notes §5); Authorizations is empty before signing.
type Envelope struct {
	V              int                     `json:"v"`
	EnvID          string                  `json:"env_id"`
	Htm            string                  `json:"htm"`
	Htu            string                  `json:"htu"`
	BodyDigest     string                  `json:"body_digest"`
	TotalCredits   int64                   `json:"total_credits"`
	Nonce          string                  `json:"nonce"`
	IssuedAt       string                  `json:"issued_at"`
	Expires        string                  `json:"expires"`
	Parties        []EnvelopeParty         `json:"parties"`
	Authorizations []EnvelopeAuthorization `json:"authorizations,omitempty"`
}

// ParseShare is a share in millionths, exactly; false when it is not a share string (or above 1,000,000).
func ParseShare(share string) (int64, bool) {
	if !sharePattern.MatchString(share) || len(share) > 14 {
		return 0, false
	}
	whole, fraction, _ := strings.Cut(share, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > shareScale {
		return 0, false
	}
	f := int64(0)
	if fraction != "" {
		f, _ = strconv.ParseInt(fraction+strings.Repeat("0", 6-len(fraction)), 10, 64)
	}
	return w*shareScale + f, true
}

// SplitCredits is what the service charges each party: floor(total x share), the leftover credits one each to the
// largest fractional parts, ties to the party listed first. Exact for any total (big integers inside).
func SplitCredits(total int64, shares []string) ([]int64, error) {
	if total < 0 {
		return nil, fmt.Errorf("total must not be negative")
	}
	scale := big.NewInt(shareScale)
	exact := make([]*big.Int, len(shares))
	remainders := make([]*big.Int, len(shares))
	parts := make([]int64, len(shares))
	var sum, given int64
	for i, s := range shares {
		v, ok := ParseShare(s)
		if !ok {
			return nil, fmt.Errorf("not a share: %q", s)
		}
		sum += v
		exact[i] = new(big.Int).Mul(big.NewInt(total), big.NewInt(v))
		quotient, remainder := new(big.Int).QuoRem(exact[i], scale, new(big.Int))
		parts[i], remainders[i] = quotient.Int64(), remainder
		given += parts[i]
	}
	if sum != shareScale {
		return nil, fmt.Errorf("shares must sum to exactly 1")
	}
	order := make([]int, len(shares))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return remainders[order[a]].Cmp(remainders[order[b]]) > 0 })
	for i := int64(0); i < total-given; i++ {
		parts[order[i]]++
	}
	return parts, nil
}

// EnvelopeSigningInput is the prefix line followed by the JCS of the envelope without authorizations.
func EnvelopeSigningInput(e Envelope) ([]byte, error) {
	e.Authorizations = nil
	canonical, err := CanonicalJSONOf(e)
	if err != nil {
		return nil, err
	}
	return append([]byte(EnvelopeSigningPrefix), canonical...), nil
}

// PartyKID is the RFC 7638 thumbprint of a party's key, as `notary parties add-key` registers it.
func PartyKID(key ed25519.PrivateKey) string {
	return JWKThumbprint(b64url(key.Public().(ed25519.PublicKey)))
}

// SignEnvelope signs the envelope with each party's key, authorizations in party order.
func SignEnvelope(e Envelope, keys map[string]ed25519.PrivateKey) (Envelope, error) {
	input, err := EnvelopeSigningInput(e)
	if err != nil {
		return e, err
	}
	e.Authorizations = nil
	for _, p := range e.Parties {
		key, ok := keys[p.Party]
		if !ok {
			return e, fmt.Errorf("no private key for party %q", p.Party)
		}
		e.Authorizations = append(e.Authorizations, EnvelopeAuthorization{Party: p.Party, Sig: "ed25519:" + b64url(ed25519.Sign(key, input))})
	}
	return e, nil
}

// EncodeEnvelope is the base64url of the envelope's JCS: what Authorization: MPP envelope= carries.
func EncodeEnvelope(e Envelope) (string, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	canonical, err := CanonicalJSON(raw)
	if err != nil {
		return "", err
	}
	return b64url(canonical), nil
}

// EnvelopeOptions describe one request to sign for.
type EnvelopeOptions struct {
	Method       string
	URL          string
	Body         []byte
	TotalCredits int64
	Parties      []MPPParty
	TTL          time.Duration // default 120 s, at most 300 s
	Now          time.Time     // default time.Now()
	Nonce        string        // default 18 random bytes
	EnvID        string        // default env_ + 15 random bytes
}

func randomB64(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	return b64url(buf)
}

// BuildEnvelope builds and signs the envelope for one request; it returns the envelope and the Authorization value.
func BuildEnvelope(o EnvelopeOptions) (Envelope, string, error) {
	ttl := o.TTL
	if ttl == 0 {
		ttl = 120 * time.Second
	}
	if ttl < time.Second || ttl > MaxEnvelopeLifetime {
		return Envelope{}, "", fmt.Errorf("TTL must be 1 s to 300 s")
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	issued := now.UTC().Truncate(time.Second)
	e := Envelope{
		V: 1, EnvID: o.EnvID, Htm: strings.ToUpper(o.Method), Htu: o.URL, BodyDigest: SHA256Digest(o.Body),
		TotalCredits: o.TotalCredits, Nonce: o.Nonce,
		IssuedAt: issued.Format("2006-01-02T15:04:05Z"), Expires: issued.Add(ttl).Format("2006-01-02T15:04:05Z"),
	}
	if e.EnvID == "" {
		e.EnvID = "env_" + randomB64(15)
	}
	if e.Nonce == "" {
		e.Nonce = randomB64(18)
	}
	keys := map[string]ed25519.PrivateKey{}
	for _, p := range o.Parties {
		if _, ok := ParseShare(p.Share); !ok {
			return Envelope{}, "", fmt.Errorf("party %s: share %q is not a decimal string with at most 6 decimals", p.Party, p.Share)
		}
		e.Parties = append(e.Parties, EnvelopeParty{Party: p.Party, KID: PartyKID(p.PrivateKey), Share: p.Share})
		keys[p.Party] = p.PrivateKey
	}
	signed, err := SignEnvelope(e, keys)
	if err != nil {
		return Envelope{}, "", err
	}
	encoded, err := EncodeEnvelope(signed)
	if err != nil {
		return Envelope{}, "", err
	}
	return signed, "MPP envelope=" + encoded, nil
}
