module github.com/notary-search/notary/sdk/go

go 1.22

require (
	github.com/decred/dcrd/dcrec/secp256k1/v4 v4.4.1
	github.com/gowebpki/jcs v1.0.2
	golang.org/x/crypto v0.31.0
)

require golang.org/x/sys v0.28.0 // indirect
