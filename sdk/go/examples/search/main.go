// The same search in every payment mode: go run ./examples/search <api_key|signed|x402|x402_receipt|mpp> "<query>"
// Reads NOTARY_URL, NOTARY_API_KEY, NOTARY_WALLET_KEY, NOTARY_FACILITATOR_URL, NOTARY_MPP_PARTIES (name=share:seedhex,...).
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"math/big"
	"os"
	"strings"

	notary "github.com/notary-search/notary/sdk/go"
)

func main() {
	mode, query := "api_key", "vacuum dead tuples"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if len(os.Args) > 2 {
		query = os.Args[2]
	}
	var payment notary.Payment
	switch mode {
	case "api_key", "signed":
		payment = notary.APIKey(os.Getenv("NOTARY_API_KEY"))
	case "x402", "x402_receipt":
		wallet, err := notary.NewEVMWallet(os.Getenv("NOTARY_WALLET_KEY"))
		if err != nil {
			log.Fatal(err)
		}
		payer := notary.WalletPayer{Wallet: wallet, MaxAmountPerCall: big.NewInt(10_000)}
		if mode == "x402" {
			payment = notary.X402{Payer: &payer}
		} else {
			payment = notary.X402{Payer: &notary.ReceiptPayer{WalletPayer: payer, FacilitatorURL: os.Getenv("NOTARY_FACILITATOR_URL")}}
		}
	case "mpp":
		var parties []notary.MPPParty
		for _, entry := range strings.Split(os.Getenv("NOTARY_MPP_PARTIES"), ",") {
			party, rest, _ := strings.Cut(entry, "=")
			share, seed, _ := strings.Cut(rest, ":")
			raw, err := hex.DecodeString(seed)
			if err != nil {
				log.Fatal(err)
			}
			parties = append(parties, notary.MPPParty{Party: party, Share: share, PrivateKey: ed25519.NewKeyFromSeed(raw)})
		}
		payment = notary.MPP{Parties: parties}
	}
	client, err := notary.NewClient(os.Getenv("NOTARY_URL"), notary.WithPayment(payment), notary.WithSign(mode == "signed"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	result, err := client.Search(ctx, notary.SearchRequest{Query: query, Depth: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("mode: %s (Go)\n", mode)
	for i, r := range result.Results {
		if i == 3 {
			break
		}
		fmt.Printf("%d. %s  %s  %.3f\n", i+1, r.Title, r.URL, r.RerankScore)
	}
	fmt.Printf("credits_used: %d  request_id: %s  attempts: %d\n", result.CreditsUsed, result.RequestID, result.Attempts)
	if len(result.Receipts) > 0 {
		var parts []string
		for _, r := range result.Receipts {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", r.Party, r.Credits, r.Share))
		}
		fmt.Println("receipts: " + strings.Join(parts, ", "))
	}
	if header := result.Raw.Header.Get("PAYMENT-RESPONSE"); header != "" {
		var settled struct{ Transaction string }
		raw, _ := base64.StdEncoding.DecodeString(header)
		_ = json.Unmarshal(raw, &settled)
		fmt.Println("settled on chain: " + settled.Transaction)
	}
	if result.NotaryReceipt != nil {
		v, err := client.VerifyReceipt(ctx, result.Meta)
		if err != nil {
			log.Fatal(err)
		}
		state := "INVALID"
		if v.Valid {
			state = "valid"
		}
		fmt.Printf("signed receipt: %s (%s, %d credits, kid %s…)\n", state, result.NotaryReceipt.Claim, result.NotaryReceipt.Credits, result.NotaryReceipt.KID[:8])
	}
}
