package notary

import (
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
