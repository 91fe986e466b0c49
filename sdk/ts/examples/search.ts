// The same search in every payment mode: npx tsx sdk/ts/examples/search.ts <api_key|signed|x402|x402_receipt|mpp> "<query>"
// Reads NOTARY_URL, NOTARY_API_KEY, NOTARY_WALLET_KEY, NOTARY_FACILITATOR_URL, NOTARY_MPP_PARTIES (name=share:seedhex,...).
import { privateKeyToAccount } from 'viem/accounts';
import { NotaryClient, apiKey, fromHex, mpp, receiptPayer, walletPayer, x402, type Payment } from '../src/index.js';

const [mode = 'api_key', query = 'vacuum dead tuples'] = process.argv.slice(2);
const env = (name: string) => process.env[name] ?? '';
const wallet = () => privateKeyToAccount(env('NOTARY_WALLET_KEY') as `0x${string}`);
const payments: Record<string, () => Payment> = {
  api_key: () => apiKey(env('NOTARY_API_KEY')),
  signed: () => apiKey(env('NOTARY_API_KEY')),
  x402: () => x402(walletPayer(wallet(), { maxAmountPerCall: 10_000 })),
  x402_receipt: () => x402(receiptPayer(wallet(), { maxAmountPerCall: 10_000, facilitatorUrl: env('NOTARY_FACILITATOR_URL') })),
  mpp: () =>
    mpp(
      env('NOTARY_MPP_PARTIES')
        .split(',')
        .map((entry) => {
          const [party = '', rest = ''] = entry.split('=');
          const [share = '', seed = ''] = rest.split(':');
          return { party, share, privateKey: fromHex(seed) };
        }),
    ),
};

const client = new NotaryClient({ baseUrl: env('NOTARY_URL'), payment: payments[mode]?.(), sign: mode === 'signed' });
const result = await client.search({ query, depth: 1 });
console.log(`mode: ${mode} (TypeScript)`);
result.results.slice(0, 3).forEach((r, i) => console.log(`${i + 1}. ${r.title}  ${r.url}  ${r.rerank_score.toFixed(3)}`));
console.log(`credits_used: ${result.creditsUsed}  request_id: ${result.requestId}  attempts: ${result.attempts}`);
if (result.receipts) console.log(`receipts: ${result.receipts.map((r) => `${r.party} ${r.credits} (${r.share})`).join(', ')}`);
const settlement = result.raw.headers.get('payment-response');
if (settlement) console.log(`settled on chain: ${(JSON.parse(atob(settlement)) as { transaction: string }).transaction}`);
if (result.notary_receipt) {
  const verification = await client.verifyReceipt(result);
  console.log(`signed receipt: ${verification.valid ? 'valid' : 'INVALID'} (${result.notary_receipt.claim}, ${result.notary_receipt.credits} credits, kid ${result.notary_receipt.kid.slice(0, 8)}…)`);
}
