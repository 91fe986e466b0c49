package notary

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"
)

// The client's offline checks: the service's receipt keys, signed receipts and the receipt log's proofs.

// JWKS is the service's receipt key set (/.well-known/jwks.json), cached for 5 minutes.
func (c *Client) JWKS(ctx context.Context) (*JWKS, error) {
	c.jwksMu.Lock()
	defer c.jwksMu.Unlock()
	if c.jwks != nil && time.Since(c.jwksAt) < 5*time.Minute {
		return c.jwks, nil
	}
	var jwks JWKS
	if err := c.GetJSON(ctx, "/.well-known/jwks.json", &jwks); err != nil {
		return nil, err
	}
	c.jwks, c.jwksAt = &jwks, time.Now()
	return &jwks, nil
}

// VerifyReceipt verifies a signed result offline against the service's JWKS: signature, key validity, the response
// body and the request body sent.
func (c *Client) VerifyReceipt(ctx context.Context, meta Meta) (*ReceiptVerification, error) {
	jwks, err := c.JWKS(ctx)
	if err != nil {
		return nil, err
	}
	return VerifyReceipt(meta.Raw.Body, *jwks, meta.Raw.RequestBody)
}

// Checkpoint is the receipt log's latest checkpoint, verified with verifierKeys (default: the log's published ones).
func (c *Client) Checkpoint(ctx context.Context, verifierKeys ...string) (*Checkpoint, error) {
	var info struct {
		Origin       string   `json:"origin"`
		VerifierKeys []string `json:"verifier_keys"`
	}
	if err := c.GetJSON(ctx, "/v1/receipts/log", &info); err != nil {
		return nil, err
	}
	if len(verifierKeys) == 0 {
		verifierKeys = info.VerifierKeys
	}
	var verifiers []*VerifierKey
	for _, k := range verifierKeys {
		v, err := ParseVerifierKey(k)
		if err != nil {
			return nil, err
		}
		verifiers = append(verifiers, v)
	}
	raw, err := c.GetRaw(ctx, "/v1/receipts/log/checkpoint")
	if err != nil {
		return nil, err
	}
	return OpenCheckpoint(string(raw.Body), verifiers, info.Origin)
}

func decodeHashes(list []string) ([][]byte, error) {
	out := make([][]byte, len(list))
	for i, h := range list {
		b, err := base64.StdEncoding.DecodeString(h)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// VerifyInclusion reports whether the receipt is in the log under cp.
func (c *Client) VerifyInclusion(ctx context.Context, receipt Receipt, cp *Checkpoint) (bool, error) {
	leaf, err := ReceiptLeaf(receipt)
	if err != nil {
		return false, err
	}
	hash := LeafHash(leaf)
	var proof struct {
		LeafIndex uint64   `json:"leaf_index"`
		Hashes    []string `json:"hashes"`
	}
	if err := c.GetJSON(ctx, fmt.Sprintf("/v1/receipts/log/inclusion?leaf_hash=%x&tree_size=%d", hash, cp.Size), &proof); err != nil {
		return false, err
	}
	hashes, err := decodeHashes(proof.Hashes)
	if err != nil {
		return false, err
	}
	return VerifyInclusion(proof.LeafIndex, cp.Size, hash, hashes, cp.RootHash), nil
}

// VerifyConsistency reports whether newer extends older (the log was only appended to).
func (c *Client) VerifyConsistency(ctx context.Context, older, newer *Checkpoint) (bool, error) {
	if older.Size == 0 {
		return true, nil
	}
	if older.Size == newer.Size {
		return VerifyConsistency(older.Size, newer.Size, older.RootHash, newer.RootHash, nil), nil
	}
	var proof struct {
		Hashes []string `json:"hashes"`
	}
	if err := c.GetJSON(ctx, fmt.Sprintf("/v1/receipts/log/consistency?first=%d&second=%d", older.Size, newer.Size), &proof); err != nil {
		return false, err
	}
	hashes, err := decodeHashes(proof.Hashes)
	if err != nil {
		return false, err
	}
	return VerifyConsistency(older.Size, newer.Size, older.RootHash, newer.RootHash, hashes), nil
}
