package notary

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"golang.org/x/crypto/sha3"
)

// EVMWallet is an Ethereum key that signs EIP-712 EIP-3009 authorizations for x402's exact scheme.
type EVMWallet struct {
	key     *secp256k1.PrivateKey
	Address string // EIP-55 checksummed
}

func keccak(parts ...[]byte) []byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// checksumAddress is EIP-55.
func checksumAddress(raw []byte) string {
	lower := hex.EncodeToString(raw)
	hash := hex.EncodeToString(keccak([]byte(lower)))
	out := []byte(lower)
	for i, c := range out {
		if c >= 'a' && hash[i] >= '8' {
			out[i] = c - 32
		}
	}
	return "0x" + string(out)
}

// NewEVMWallet reads a 0x-hex secp256k1 private key.
func NewEVMWallet(privateKeyHex string) (*EVMWallet, error) {
	raw, err := hex.DecodeString(strings.TrimPrefix(privateKeyHex, "0x"))
	if err != nil || len(raw) != 32 {
		return nil, errors.New("notary: an EVM private key is 32 bytes of hex")
	}
	key := secp256k1.PrivKeyFromBytes(raw)
	public := key.PubKey().SerializeUncompressed()
	return &EVMWallet{key: key, Address: checksumAddress(keccak(public[1:])[12:])}, nil
}

func word(n *big.Int) []byte { return n.FillBytes(make([]byte, 32)) }

func addressWord(address string) ([]byte, error) {
	raw, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(address), "0x"))
	if err != nil || len(raw) != 20 {
		return nil, fmt.Errorf("not an address: %s", address)
	}
	return append(make([]byte, 12), raw...), nil
}

func decimal(s string) (*big.Int, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 {
		return nil, fmt.Errorf("not an unsigned integer: %q", s)
	}
	return n, nil
}

// EIP3009Authorization is transferWithAuthorization's message; integers in decimal, nonce as 0x bytes32.
type EIP3009Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// SignTransferWithAuthorization signs the EIP-712 digest of the authorization for the token (domain name, version,
// chain id, contract) and returns the 65-byte r || s || v signature in 0x hex.
func (w *EVMWallet) SignTransferWithAuthorization(name, version string, chainID int64, token string, a EIP3009Authorization) (string, error) {
	domainType := keccak([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	contract, err := addressWord(token)
	if err != nil {
		return "", err
	}
	domain := keccak(domainType, keccak([]byte(name)), keccak([]byte(version)), word(big.NewInt(chainID)), contract)
	messageType := keccak([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	from, err := addressWord(a.From)
	if err != nil {
		return "", err
	}
	to, err := addressWord(a.To)
	if err != nil {
		return "", err
	}
	var numbers [][]byte
	for _, v := range []string{a.Value, a.ValidAfter, a.ValidBefore} {
		n, err := decimal(v)
		if err != nil {
			return "", err
		}
		numbers = append(numbers, word(n))
	}
	nonce, err := hex.DecodeString(strings.TrimPrefix(a.Nonce, "0x"))
	if err != nil || len(nonce) != 32 {
		return "", errors.New("the nonce must be 32 bytes of 0x hex")
	}
	message := keccak(messageType, from, to, numbers[0], numbers[1], numbers[2], nonce)
	digest := keccak([]byte{0x19, 0x01}, domain, message)
	compact := ecdsa.SignCompact(w.key, digest, false) // [27 + recovery id] || r || s, RFC 6979 nonce
	signature := append(append([]byte{}, compact[1:]...), compact[0])
	return "0x" + hex.EncodeToString(signature), nil
}

// PaymentPayload is an x402 v2 payment of the exact scheme on EVM.
type PaymentPayload struct {
	X402Version int                 `json:"x402Version"`
	Resource    map[string]any      `json:"resource,omitempty"`
	Accepted    PaymentRequirements `json:"accepted"`
	Payload     struct {
		Signature     string               `json:"signature"`
		Authorization EIP3009Authorization `json:"authorization"`
	} `json:"payload"`
}

// WalletPayer is the standard x402 v2 flow: it signs the payment and sends it as PAYMENT-SIGNATURE; the service
// settles it through its facilitator only after the work succeeded. MaxAmountPerCall (smallest units of the asset)
// caps what one call may cost: a dearer challenge is refused before anything is signed.
type WalletPayer struct {
	Wallet           *EVMWallet
	MaxAmountPerCall *big.Int
	Networks         []string // default: any
	Assets           []string // default: any
}

func (p *WalletPayer) choose(required *PaymentRequired) (*PaymentRequirements, error) {
	var asked []string
	for i := range required.Accepts {
		r := &required.Accepts[i]
		if r.Scheme != "exact" || !strings.HasPrefix(r.Network, "eip155:") || (len(p.Networks) > 0 && !contains(p.Networks, r.Network)) || (len(p.Assets) > 0 && !contains(p.Assets, r.Asset)) {
			continue
		}
		amount, err := decimal(r.Amount)
		if err == nil && amount.Cmp(p.MaxAmountPerCall) <= 0 {
			return r, nil
		}
		asked = append(asked, fmt.Sprintf("%s of %s on %s", r.Amount, r.Asset, r.Network))
	}
	if len(asked) == 0 {
		asked = []string{"nothing this wallet pays with"}
	}
	return nil, fmt.Errorf("x402: the service asks for %s; this wallet pays at most %s per call", strings.Join(asked, ", "), p.MaxAmountPerCall)
}

func contains(list []string, value string) bool {
	for _, v := range list {
		if strings.EqualFold(v, value) {
			return true
		}
	}
	return false
}

// Sign makes the PaymentPayload for exactly these requirements.
func (p *WalletPayer) Sign(required *PaymentRequired, r *PaymentRequirements) (*PaymentPayload, error) {
	name, _ := r.Extra["name"].(string)
	version, _ := r.Extra["version"].(string)
	if name == "" || version == "" {
		return nil, errors.New("x402: the requirements name no EIP-712 domain (extra.name, extra.version)")
	}
	chainID, err := strconv.ParseInt(strings.TrimPrefix(r.Network, "eip155:"), 10, 64)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, 32)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	a := EIP3009Authorization{From: p.Wallet.Address, To: r.PayTo, Value: r.Amount, ValidAfter: "0", ValidBefore: strconv.FormatInt(time.Now().Unix()+r.MaxTimeoutSeconds, 10), Nonce: "0x" + hex.EncodeToString(nonce)}
	signature, err := p.Wallet.SignTransferWithAuthorization(name, version, chainID, r.Asset, a)
	if err != nil {
		return nil, err
	}
	payload := &PaymentPayload{X402Version: 2, Resource: required.Resource, Accepted: *r}
	payload.Payload.Signature, payload.Payload.Authorization = signature, a
	return payload, nil
}

// signChallenge picks the challenge's payment option this wallet can pay and signs it.
func (p *WalletPayer) signChallenge(c *X402Challenge) (*PaymentPayload, *PaymentRequirements, error) {
	required := c.PaymentRequired()
	if required == nil {
		return nil, nil, errors.New("x402: the 402 carries no PAYMENT-REQUIRED header (is x402 enabled on the service?)")
	}
	r, err := p.choose(required)
	if err != nil {
		return nil, nil, err
	}
	payload, err := p.Sign(required, r)
	if err != nil {
		return nil, nil, err
	}
	return payload, r, nil
}

// Pay answers the challenge with PAYMENT-SIGNATURE.
func (p *WalletPayer) Pay(_ context.Context, c *X402Challenge) (map[string]string, error) {
	payload, _, err := p.signChallenge(c)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return map[string]string{"PAYMENT-SIGNATURE": base64.StdEncoding.EncodeToString(raw)}, nil
}

// ReceiptPayer is the interface's flow (X-402-Receipt): it settles first through the facilitator (POST /settle),
// then the request is repeated with the facilitator's signed settlement receipt.
type ReceiptPayer struct {
	WalletPayer
	FacilitatorURL string
	HTTPClient     *http.Client
}

// Pay settles through the facilitator and answers the challenge with X-402-Receipt.
func (p *ReceiptPayer) Pay(ctx context.Context, c *X402Challenge) (map[string]string, error) {
	payload, r, err := p.signChallenge(c)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]any{"x402Version": 2, "paymentPayload": payload, "paymentRequirements": r})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(p.FacilitatorURL, "/")+"/settle", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	client := p.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var settled struct {
		Success     bool   `json:"success"`
		ErrorReason string `json:"errorReason"`
		Extensions  map[string]struct {
			Receipt string `json:"receipt"`
		} `json:"extensions"`
	}
	_ = json.NewDecoder(res.Body).Decode(&settled)
	receipt := settled.Extensions["x402-settlement-receipt"].Receipt
	if res.StatusCode != http.StatusOK || !settled.Success || receipt == "" {
		return nil, fmt.Errorf("x402: the facilitator did not settle (%d %s)", res.StatusCode, settled.ErrorReason)
	}
	return map[string]string{"X-402-Receipt": receipt}, nil
}
