package notary

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The shared conformance vectors (spec/vectors): the same files the TypeScript and Python libraries pass.
var vectorsDir = filepath.Join("..", "..", "spec", "vectors")

func load(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJCSVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name        string `json:"name"`
			Input       string `json:"input"`
			ExpectedHex string `json:"expected_hex"`
		} `json:"cases"`
		Numbers []struct {
			IEEEHex  string `json:"ieee_hex"`
			Expected string `json:"expected"`
		} `json:"numbers"`
		Errors []struct {
			IEEEHex string `json:"ieee_hex"`
		} `json:"errors"`
	}
	load(t, "jcs.json", &v)
	for _, c := range v.Cases {
		out, err := CanonicalJSON([]byte(c.Input))
		if err != nil || hex.EncodeToString(out) != c.ExpectedHex {
			t.Errorf("%s: got %s (%v)", c.Name, out, err)
		}
	}
	for _, n := range v.Numbers {
		f := math.Float64frombits(binary.BigEndian.Uint64(unhex(t, n.IEEEHex)))
		out, err := CanonicalJSONOf(f)
		if err != nil || string(out) != n.Expected {
			t.Errorf("%s: got %s, want %s (%v)", n.IEEEHex, out, n.Expected, err)
		}
	}
	for _, n := range v.Errors {
		f := math.Float64frombits(binary.BigEndian.Uint64(unhex(t, n.IEEEHex)))
		if _, err := CanonicalJSONOf(f); err == nil {
			t.Errorf("%s: no error", n.IEEEHex)
		}
	}
}

func TestAPIKeyVectors(t *testing.T) {
	var v struct {
		Valid []struct {
			Secret, Checksum, Key string
			CRC32                 uint32 `json:"crc32"`
		} `json:"valid"`
		Invalid []struct{ Key, Why string } `json:"invalid"`
	}
	load(t, "api-keys.json", &v)
	for _, k := range v.Valid {
		if crc32.ChecksumIEEE([]byte(k.Secret)) != k.CRC32 || APIKeyChecksum(k.Secret) != k.Checksum || CheckAPIKey(k.Key) != nil {
			t.Errorf("valid key %s refused", k.Key)
		}
	}
	for _, k := range v.Invalid {
		if CheckAPIKey(k.Key) == nil {
			t.Errorf("invalid key accepted (%s)", k.Why)
		}
	}
}

func TestDigestVectors(t *testing.T) {
	var v struct {
		Request []struct {
			BodyHex string `json:"body_hex"`
			Digest  string `json:"digest"`
			Salt    string `json:"salt"`
		} `json:"request"`
		Response []struct {
			Body   json.RawMessage `json:"body"`
			JCS    string          `json:"jcs"`
			Digest string          `json:"digest"`
		} `json:"response"`
	}
	load(t, "digests.json", &v)
	salted := 0
	for _, r := range v.Request {
		got := SHA256Digest(unhex(t, r.BodyHex))
		if r.Salt != "" {
			salted++
			got, _ = SaltedRequestDigest(unhex(t, r.BodyHex), r.Salt)
		}
		if got != r.Digest {
			t.Errorf("request digest %s, want %s", got, r.Digest)
		}
	}
	if salted == 0 {
		t.Error("no version 2 (salted) request digests in digests.json")
	}
	for _, r := range v.Response {
		if got, err := ResponseDigest(r.Body); err != nil || got != r.Digest {
			t.Errorf("response digest %s, want %s (%v)", got, r.Digest, err)
		}
	}
}

func TestReceiptVectors(t *testing.T) {
	var v struct {
		KnownAnswers struct {
			RFC8032 struct {
				SeedHex      string `json:"seed_hex"`
				PublicKeyHex string `json:"public_key_hex"`
				MessageHex   string `json:"message_hex"`
				SignatureHex string `json:"signature_hex"`
			} `json:"rfc8032_test1"`
			Thumbprint struct{ X, KID string } `json:"rfc8037_thumbprint"`
		} `json:"known_answers"`
		Cases []struct {
			Name           string          `json:"name"`
			DigestVersion  int             `json:"digest_version"`
			SeedHex        string          `json:"seed_hex"`
			JWK            JWK             `json:"jwk"`
			RequestBodyHex string          `json:"request_body_hex"`
			ResponseBody   json.RawMessage `json:"response_body"`
			SignedBytesHex string          `json:"signed_bytes_hex"`
			Signature      string          `json:"signature"`
			Receipt        Receipt         `json:"receipt"`
			LeafHex        string          `json:"leaf_hex"`
			LeafHashHex    string          `json:"leaf_hash_hex"`
		} `json:"cases"`
	}
	load(t, "receipts.json", &v)
	ka := v.KnownAnswers.RFC8032
	key := ed25519.NewKeyFromSeed(unhex(t, ka.SeedHex))
	if hex.EncodeToString(key.Public().(ed25519.PublicKey)) != ka.PublicKeyHex || hex.EncodeToString(ed25519.Sign(key, unhex(t, ka.MessageHex))) != ka.SignatureHex {
		t.Error("RFC 8032 test 1")
	}
	if JWKThumbprint(v.KnownAnswers.Thumbprint.X) != v.KnownAnswers.Thumbprint.KID {
		t.Error("RFC 8037 thumbprint")
	}
	for _, c := range v.Cases {
		input, _ := ReceiptSigningInput(c.Receipt)
		if hex.EncodeToString(input) != c.SignedBytesHex {
			t.Errorf("%s: signing input", c.Name)
		}
		if "ed25519:"+b64url(ed25519.Sign(ed25519.NewKeyFromSeed(unhex(t, c.SeedHex)), input)) != c.Signature {
			t.Errorf("%s: signature", c.Name)
		}
		leaf, _ := ReceiptLeaf(c.Receipt)
		if hex.EncodeToString(leaf) != c.LeafHex || hex.EncodeToString(LeafHash(leaf)) != c.LeafHashHex {
			t.Errorf("%s: leaf", c.Name)
		}
		jwks := JWKS{Keys: []JWK{c.JWK}}
		request := unhex(t, c.RequestBodyHex)
		with := func(receipt any, body json.RawMessage) []byte {
			var members map[string]json.RawMessage
			_ = json.Unmarshal(body, &members)
			r, _ := json.Marshal(receipt)
			members["notary_receipt"] = r
			out, _ := json.Marshal(members)
			return out
		}
		ok, err := VerifyReceipt(with(c.Receipt, c.ResponseBody), jwks, request)
		if err != nil || !ok.Valid {
			t.Errorf("%s: valid receipt refused: %v %+v", c.Name, err, ok.Failures())
		}
		var fields map[string]any
		raw, _ := json.Marshal(c.Receipt)
		_ = json.Unmarshal(raw, &fields)
		for name, value := range fields {
			changed := map[string]any{}
			for k, v := range fields {
				changed[k] = v
			}
			switch x := value.(type) {
			case float64:
				changed[name] = x + 1
			case string:
				if name == "signature" {
					pos := len(x) - 3
					repl := "A"
					if x[pos] == 'A' {
						repl = "B"
					}
					changed[name] = x[:pos] + repl + x[pos+1:]
				} else {
					changed[name] = x + "x"
				}
			}
			if res, err := VerifyReceipt(with(changed, c.ResponseBody), jwks, request); err == nil && res.Valid {
				t.Errorf("%s: a changed %s still verifies", c.Name, name)
			}
		}
		if res, _ := VerifyReceipt(with(c.Receipt, c.ResponseBody), jwks, []byte("{}")); res.Valid {
			t.Errorf("%s: another request body verifies", c.Name)
		}
		if c.DigestVersion == 2 {
			// The salt lives in the body: without it the request cannot be confirmed.
			var members map[string]json.RawMessage
			_ = json.Unmarshal(c.ResponseBody, &members)
			delete(members, "notary_request_salt")
			without, _ := json.Marshal(members)
			res, _ := VerifyReceipt(with(c.Receipt, without), jwks, request)
			if res == nil || res.Valid || !failed(res, "request_digest") {
				t.Errorf("%s: verifies without notary_request_salt", c.Name)
			}
		}
		altered := bytes.Replace(with(c.Receipt, c.ResponseBody), []byte(`"credits_used":`), []byte(`"credits_used":1`), 1)
		if res, err := VerifyReceipt(altered, jwks, nil); err == nil && res.Valid {
			t.Errorf("%s: an altered body verifies", c.Name)
		}
	}
}

type tree struct {
	LeavesHex     []string `json:"leaves_hex"`
	LeafHashesHex []string `json:"leaf_hashes_hex"`
	Roots         []struct {
		TreeSize uint64 `json:"tree_size"`
		RootHex  string `json:"root_hex"`
	} `json:"roots"`
	Inclusion []struct {
		LeafIndex uint64   `json:"leaf_index"`
		TreeSize  uint64   `json:"tree_size"`
		ProofHex  []string `json:"proof_hex"`
	} `json:"inclusion"`
	Consistency []struct {
		First    uint64   `json:"first"`
		Second   uint64   `json:"second"`
		ProofHex []string `json:"proof_hex"`
	} `json:"consistency"`
}

func TestMerkleVectors(t *testing.T) {
	var v struct {
		CT              tree `json:"ct_test_tree"`
		Wide            tree `json:"wide_tree"`
		TransparencyDev struct {
			Cases []struct {
				Kind       string      `json:"kind"`
				Name       string      `json:"name"`
				LeafIndex  json.Number `json:"leaf_index"`
				TreeSize   json.Number `json:"tree_size"`
				LeafHash   string      `json:"leaf_hash_b64"`
				Root       string      `json:"root_b64"`
				First      json.Number `json:"first"`
				Second     json.Number `json:"second"`
				FirstRoot  string      `json:"first_root_b64"`
				SecondRoot string      `json:"second_root_b64"`
				Proof      []string    `json:"proof_b64"`
				WantError  bool        `json:"want_error"`
			} `json:"cases"`
		} `json:"transparency_dev"`
	}
	load(t, "merkle.json", &v)
	hexes := func(list []string) [][]byte {
		out := make([][]byte, len(list))
		for i, h := range list {
			out[i] = unhex(t, h)
		}
		return out
	}
	for _, tr := range []tree{v.CT, v.Wide} {
		hashes := make([][]byte, len(tr.LeavesHex))
		for i, l := range tr.LeavesHex {
			hashes[i] = LeafHash(unhex(t, l))
			if hex.EncodeToString(hashes[i]) != tr.LeafHashesHex[i] {
				t.Errorf("leaf %d", i)
			}
		}
		roots := map[uint64][]byte{}
		for _, r := range tr.Roots {
			roots[r.TreeSize] = unhex(t, r.RootHex)
		}
		for _, p := range tr.Inclusion {
			root, ok := roots[p.TreeSize]
			if !ok {
				continue
			}
			if !VerifyInclusion(p.LeafIndex, p.TreeSize, hashes[p.LeafIndex], hexes(p.ProofHex), root) {
				t.Errorf("inclusion %d/%d", p.LeafIndex, p.TreeSize)
			}
			flipped := append([]byte{hashes[p.LeafIndex][0] ^ 1}, hashes[p.LeafIndex][1:]...)
			if VerifyInclusion(p.LeafIndex, p.TreeSize, flipped, hexes(p.ProofHex), root) {
				t.Errorf("altered leaf %d/%d verifies", p.LeafIndex, p.TreeSize)
			}
		}
		for _, p := range tr.Consistency {
			a, okA := roots[p.First]
			b, okB := roots[p.Second]
			if okA && okB && !VerifyConsistency(p.First, p.Second, a, b, hexes(p.ProofHex)) {
				t.Errorf("consistency %d->%d", p.First, p.Second)
			}
		}
	}
	b64 := func(s string) []byte {
		b, _ := base64.StdEncoding.DecodeString(s)
		return b
	}
	for _, c := range v.TransparencyDev.Cases {
		proof := make([][]byte, len(c.Proof))
		for i, p := range c.Proof {
			proof[i] = b64(p)
		}
		// Sizes past 2^64 (some cases use them) are not uint64s: such a proof cannot verify.
		u := func(n json.Number) (uint64, bool) {
			v, err := strconv.ParseUint(string(n), 10, 64)
			return v, err == nil || n == ""
		}
		var ok bool
		if c.Kind == "inclusion" {
			index, okI := u(c.LeafIndex)
			size, okS := u(c.TreeSize)
			ok = okI && okS && VerifyInclusion(index, size, b64(c.LeafHash), proof, b64(c.Root))
		} else {
			first, okF := u(c.First)
			second, okS := u(c.Second)
			ok = okF && okS && VerifyConsistency(first, second, b64(c.FirstRoot), b64(c.SecondRoot), proof)
		}
		if ok == c.WantError {
			t.Errorf("%s: got %v", c.Name, ok)
		}
	}
}

func TestCheckpointVectors(t *testing.T) {
	var v struct {
		Example    struct{ Vkey, Note string } `json:"c2sp_example"`
		Checkpoint struct {
			Vkey, Note, Origin string
			TreeSize           uint64 `json:"tree_size"`
			RootBase64         string `json:"root_base64"`
		} `json:"checkpoint"`
	}
	load(t, "checkpoints.json", &v)
	example, err := ParseVerifierKey(v.Example.Vkey)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := OpenNote(v.Example.Note, []*VerifierKey{example}); err != nil || text != "This is an example message.\n" {
		t.Errorf("C2SP example: %q %v", text, err)
	}
	verifier, err := ParseVerifierKey(v.Checkpoint.Vkey)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := OpenCheckpoint(v.Checkpoint.Note, []*VerifierKey{verifier}, v.Checkpoint.Origin)
	if err != nil || cp.Size != v.Checkpoint.TreeSize || base64.StdEncoding.EncodeToString(cp.RootHash) != v.Checkpoint.RootBase64 {
		t.Errorf("checkpoint: %+v %v", cp, err)
	}
	if _, err := OpenCheckpoint(strings.Replace(v.Checkpoint.Note, "\n8\n", "\n9\n", 1), []*VerifierKey{verifier}, ""); err == nil {
		t.Error("an altered checkpoint verifies")
	}
	if _, err := OpenCheckpoint(v.Checkpoint.Note, []*VerifierKey{verifier}, "other/origin"); err == nil {
		t.Error("a checkpoint of another origin is accepted")
	}
}

func TestMPPVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name    string `json:"name"`
			Request struct{ Method, URL, Body string }
			Parties []struct {
				Party   string `json:"party"`
				SeedHex string `json:"seed_hex"`
				KID     string `json:"kid"`
				Share   string `json:"share"`
			} `json:"parties"`
			Unsigned        Envelope `json:"unsigned"`
			SigningInputHex string   `json:"signing_input_hex"`
			Envelope        Envelope `json:"envelope"`
		} `json:"cases"`
	}
	load(t, "mpp-envelopes.json", &v)
	for _, c := range v.Cases {
		input, _ := EnvelopeSigningInput(c.Unsigned)
		if hex.EncodeToString(input) != c.SigningInputHex {
			t.Errorf("%s: signing input", c.Name)
		}
		var parties []MPPParty
		for _, p := range c.Parties {
			key := ed25519.NewKeyFromSeed(unhex(t, p.SeedHex))
			if PartyKID(key) != p.KID {
				t.Errorf("%s: kid of %s", c.Name, p.Party)
			}
			parties = append(parties, MPPParty{Party: p.Party, Share: p.Share, PrivateKey: key})
		}
		issued, _ := time.Parse("2006-01-02T15:04:05Z", c.Unsigned.IssuedAt)
		expires, _ := time.Parse("2006-01-02T15:04:05Z", c.Unsigned.Expires)
		built, header, err := BuildEnvelope(EnvelopeOptions{Method: c.Request.Method, URL: c.Request.URL, Body: []byte(c.Request.Body), TotalCredits: c.Unsigned.TotalCredits, Parties: parties, TTL: expires.Sub(issued), Now: issued, Nonce: c.Unsigned.Nonce, EnvID: c.Unsigned.EnvID})
		if err != nil || !reflect.DeepEqual(built, c.Envelope) || !strings.HasPrefix(header, "MPP envelope=") {
			t.Errorf("%s: built envelope differs: %v\n%+v\n%+v", c.Name, err, built, c.Envelope)
		}
	}
	var splits struct {
		Cases []struct {
			Name    string   `json:"name"`
			Total   int64    `json:"total"`
			Shares  []string `json:"shares"`
			Credits []int64  `json:"credits"`
		} `json:"cases"`
	}
	load(t, "mpp-splits.json", &splits)
	for _, c := range splits.Cases {
		got, err := SplitCredits(c.Total, c.Shares)
		if err != nil || !reflect.DeepEqual(got, c.Credits) {
			t.Errorf("%s: %v, want %v (%v)", c.Name, got, c.Credits, err)
		}
	}
}

func failed(v *ReceiptVerification, name string) bool {
	for _, c := range v.Failures() {
		if c.Name == name {
			return true
		}
	}
	return false
}
