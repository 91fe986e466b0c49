package notary

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// VerifierKey is a C2SP note verifier key: "<name>+<hex key id>+<base64(0x01 || Ed25519 public key)>".
type VerifierKey struct {
	Name      string
	KeyID     []byte
	PublicKey ed25519.PublicKey
}

// Checkpoint is a verified C2SP tlog-checkpoint of the receipt log.
type Checkpoint struct {
	Origin   string
	Size     uint64
	RootHash []byte
	Note     string
}

// NoteKeyID is SHA-256(name || 0x0A || 0x01 || public key)[:4].
func NoteKeyID(name string, publicKey []byte) []byte {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0x0a, 0x01})
	h.Write(publicKey)
	return h.Sum(nil)[:4]
}

// ParseVerifierKey parses a verifier key (the key's base64 may itself contain "+").
func ParseVerifierKey(vkey string) (*VerifierKey, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 || parts[0] == "" || !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(parts[1]) {
		return nil, fmt.Errorf("not a note verifier key: %s", vkey)
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 0x01 {
		return nil, errors.New("the verifier key is not an Ed25519 key")
	}
	id, _ := hex.DecodeString(parts[1])
	if !bytes.Equal(NoteKeyID(parts[0], raw[1:]), id) {
		return nil, errors.New("the verifier key id does not match its name and key")
	}
	return &VerifierKey{Name: parts[0], KeyID: id, PublicKey: ed25519.PublicKey(raw[1:])}, nil
}

var signatureLine = regexp.MustCompile(`^\x{2014} (\S+) ([A-Za-z0-9+/=]+)$`)

// OpenNote returns the text of a signed note signed by one of verifiers.
func OpenNote(note string, verifiers []*VerifierKey) (string, error) {
	split := strings.LastIndex(note, "\n\n")
	if split < 0 || !strings.HasSuffix(note, "\n") {
		return "", errors.New("not a signed note")
	}
	text := note[:split+1]
	for _, line := range strings.Split(note[split+2:len(note)-1], "\n") {
		m := signatureLine.FindStringSubmatch(line)
		if m == nil {
			return "", fmt.Errorf("malformed signature line: %s", line)
		}
		sig, err := base64.StdEncoding.DecodeString(m[2])
		if err != nil || len(sig) != 68 {
			continue
		}
		for _, v := range verifiers {
			if v.Name == m[1] && bytes.Equal(v.KeyID, sig[:4]) && ed25519.Verify(v.PublicKey, []byte(text), sig[4:]) {
				return text, nil
			}
		}
	}
	return "", errors.New("the note is not signed by a known key (the signature does not verify)")
}

// OpenCheckpoint verifies a checkpoint note and reads it; a non-empty origin must match its first line.
func OpenCheckpoint(note string, verifiers []*VerifierKey, origin string) (*Checkpoint, error) {
	text, err := OpenNote(note, verifiers)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(text, "\n")
	if len(lines) < 3 {
		return nil, errors.New("not a checkpoint")
	}
	if origin != "" && lines[0] != origin {
		return nil, fmt.Errorf("the checkpoint is for %s, not %s", lines[0], origin)
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return nil, errors.New("the checkpoint size is not a number")
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return nil, errors.New("the checkpoint root is not a SHA-256 hash")
	}
	return &Checkpoint{Origin: lines[0], Size: size, RootHash: root, Note: note}, nil
}
