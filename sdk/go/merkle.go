package notary

import (
	"bytes"
	"crypto/sha256"
)

// LeafHash is RFC 6962's SHA-256(0x00 || leaf).
func LeafHash(leaf []byte) []byte {
	sum := sha256.Sum256(append([]byte{0}, leaf...))
	return sum[:]
}

// NodeHash is RFC 6962's SHA-256(0x01 || left || right).
func NodeHash(left, right []byte) []byte {
	h := sha256.New()
	h.Write([]byte{1})
	h.Write(left)
	h.Write(right)
	return h.Sum(nil)
}

func allHashes(hs ...[][]byte) bool {
	for _, list := range hs {
		for _, h := range list {
			if len(h) != 32 {
				return false
			}
		}
	}
	return true
}

// RootFromInclusionProof is the root an inclusion proof leads to (RFC 9162 §2.1.3.2), or nil when it cannot be one.
func RootFromInclusionProof(index, size uint64, leaf []byte, proof [][]byte) []byte {
	if index >= size || !allHashes([][]byte{leaf}, proof) {
		return nil
	}
	fn, sn, r := index, size-1, leaf
	for _, p := range proof {
		if sn == 0 {
			return nil
		}
		if fn%2 == 1 || fn == sn {
			r = NodeHash(p, r)
			if fn%2 == 0 {
				for fn%2 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			r = NodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return nil
	}
	return r
}

// VerifyInclusion reports whether proof shows leaf (a leaf hash) at index in the tree of size leaves with root.
func VerifyInclusion(index, size uint64, leaf []byte, proof [][]byte, root []byte) bool {
	computed := RootFromInclusionProof(index, size, leaf, proof)
	return computed != nil && len(root) == 32 && bytes.Equal(computed, root)
}

// VerifyConsistency reports whether proof shows the tree of first leaves is a prefix of the tree of second leaves
// (RFC 9162 §2.1.4.2).
func VerifyConsistency(first, second uint64, firstRoot, secondRoot []byte, proof [][]byte) bool {
	if second < first || !allHashes([][]byte{firstRoot, secondRoot}, proof) {
		return false
	}
	if first == second {
		return len(proof) == 0 && bytes.Equal(firstRoot, secondRoot)
	}
	if first == 0 {
		return false
	}
	path := proof
	if first&(first-1) == 0 {
		path = append([][]byte{firstRoot}, proof...)
	}
	if len(path) == 0 {
		return false
	}
	fn, sn := first-1, second-1
	for fn%2 == 1 {
		fn >>= 1
		sn >>= 1
	}
	fr, sr := path[0], path[0]
	for _, c := range path[1:] {
		if sn == 0 {
			return false
		}
		if fn%2 == 1 || fn == sn {
			fr = NodeHash(c, fr)
			sr = NodeHash(c, sr)
			if fn%2 == 0 {
				for fn%2 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			sr = NodeHash(sr, c)
		}
		fn >>= 1
		sn >>= 1
	}
	return sn == 0 && bytes.Equal(fr, firstRoot) && bytes.Equal(sr, secondRoot)
}
