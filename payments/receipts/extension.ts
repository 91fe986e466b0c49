import type { PaymentRequest } from '../mode.js';
import type { ResponseExtension } from '../paid-call.js';
import { newRequestSalt, REQUEST_SALT_MEMBER } from '../crypto/digest.js';
import { NOTARY_SIGN_HEADER, parseNotarySignHeader } from './issuer.js';
import type { Receipts } from './index.js';

function asked(request: PaymentRequest): boolean {
  const values = request.headers[NOTARY_SIGN_HEADER];
  return parseNotarySignHeader(values === undefined ? undefined : values.length === 1 ? values[0] : [...values]);
}

/**
 * Signed receipts on the paid-call path, in every payment mode: `X-Notary-Sign: required` is checked with the other
 * headers (any other value is a 400 before any work), the response then lists `facts`, the receipt is signed over
 * the final body before the charge (so a signing failure costs nothing), and appended to the log once the charge
 * went through. The response carries the request salt (`notary_request_salt`) the receipt's request_digest is keyed
 * with; the log never does.
 */
export function signedReceiptExtension(receipts: () => Promise<Receipts>): ResponseExtension {
  return {
    check: (request) => {
      asked(request);
    },
    wantsFacts: (request) => asked(request),
    async prepare({ request, rawBody, price, body }) {
      // A crawl job is charged when it ends, outside any call: no receipt states it (yet).
      if (!asked(request) || price.claim === 'crawl_pages_consumed') return null;
      const { issuer, log } = await receipts();
      // A fresh salt per call: the log's request_digest is keyed with it, and only this response carries it.
      const requestSalt = newRequestSalt();
      const receipt = issuer.sign({ claim: price.claim, credits: price.credits, requestId: request.requestId, requestBody: rawBody, requestSalt, responseBody: { ...body } });
      return {
        members: { [REQUEST_SALT_MEMBER]: requestSalt, notary_receipt: receipt },
        commit: async () => {
          await log.append(receipt);
        },
      };
    },
  };
}
