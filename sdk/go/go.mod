module github.com/notary-search/notary/sdk/go

go 1.22

require github.com/gowebpki/jcs v1.0.2
