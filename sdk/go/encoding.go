package notary

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// CanonicalJSON is RFC 8785 (JCS) canonical JSON of any JSON text.
func CanonicalJSON(jsonText []byte) ([]byte, error) {
	return jcs.Transform(jsonText)
}

// CanonicalJSONOf marshals v and canonicalizes it (RFC 8785).
func CanonicalJSONOf(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// SHA256Digest is the RFC 9530 digest field value of data: "sha-256=:<base64>:".
func SHA256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("sha-256=:%s:", base64.StdEncoding.EncodeToString(sum[:]))
}

func b64url(data []byte) string { return base64.RawURLEncoding.EncodeToString(data) }

func unb64url(text string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(text) }

// SaltedRequestDigest is the version 2 request_digest: "hmac-sha-256=:<base64>:", HMAC-SHA-256 over the request body
// keyed with the 32 bytes of the response's notary_request_salt (base64url). The public receipt log never holds the salt.
func SaltedRequestDigest(data []byte, salt string) (string, error) {
	key, err := unb64url(salt)
	if err != nil || len(key) != 32 {
		return "", fmt.Errorf("notary_request_salt is not 32 bytes of base64url")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(data)
	return fmt.Sprintf("hmac-sha-256=:%s:", base64.StdEncoding.EncodeToString(mac.Sum(nil))), nil
}
