package notary

import (
	"fmt"
	"hash/crc32"
	"strings"
)

// APIKeyPrefix marks a live key.
const APIKeyPrefix = "sk_live_"

// TestAPIKeyPrefix marks a test key: the same API, never charged.
const TestAPIKeyPrefix = "sk_test_"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// APIKeyChecksum is the base62 CRC-32 (IEEE, as zlib) of the 32-character secret, left-padded with "0" to 6.
func APIKeyChecksum(secret string) string {
	n := crc32.ChecksumIEEE([]byte(secret))
	out := ""
	for {
		out = string(base62[n%62]) + out
		n /= 62
		if n == 0 {
			break
		}
	}
	return strings.Repeat("0", max(0, 6-len(out))) + out
}

// CheckAPIKey says why a key is malformed (prefix, length, alphabet, checksum), or returns nil: a mistyped key fails
// before any call.
func CheckAPIKey(key string) error {
	if !strings.HasPrefix(key, APIKeyPrefix) && !strings.HasPrefix(key, TestAPIKeyPrefix) {
		return fmt.Errorf("API keys start with %q or %q", APIKeyPrefix, TestAPIKeyPrefix)
	}
	if len(key) != len(APIKeyPrefix)+38 {
		return fmt.Errorf("API keys are %d characters long", len(APIKeyPrefix)+38)
	}
	body := key[len(APIKeyPrefix):]
	for _, c := range body {
		if !strings.ContainsRune(base62, c) {
			return fmt.Errorf("API keys contain only 0-9, A-Z and a-z after the prefix")
		}
	}
	if APIKeyChecksum(body[:32]) != body[32:] {
		return fmt.Errorf("the API key checksum does not match (mistyped or truncated?)")
	}
	return nil
}
