"""Client for the notary search and extraction API (sync and async).

    from notary_client import Client, ApiKey
    with Client("https://search.example.org", payment=ApiKey("sk_live_...")) as notary:
        result = notary.search("vacuum dead tuples", depth=1)
        print(result.credits_used, result.request_id, result["results"][0]["url"])
"""

from ._api_keys import api_key_checksum, api_key_problem
from ._checkpoint import Checkpoint, VerifierKey, open_checkpoint, open_note, parse_verifier_key
from ._client import SDK_VERSION, ApiKey, AsyncClient, Client, Mpp, X402, X402Challenge, X402Payer
from ._ed25519 import jwk_thumbprint, public_key_from_seed, random_seed, sign_ed25519, verify_ed25519
from ._encoding import canonical_json, salted_request_digest, sha256_digest
from ._errors import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    ConnectionError,
    NotaryApiError,
    NotaryError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    TimeoutError,
    UnprocessableError,
    retry_after_seconds,
)
from ._merkle import leaf_hash, node_hash, root_from_inclusion_proof, verify_consistency, verify_inclusion
from ._mpp import MppParty, build_envelope, encode_envelope, envelope_signing_input, parse_share, party_kid, sign_envelope, split_credits
from ._receipts import ReceiptCheck, ReceiptVerification, request_digest_for, receipt_leaf, receipt_signing_input, response_digest, verify_receipt
from ._types import CrawlJob, CrawlJobError, CrawlJobList, CrawlJobListResult, CrawlJobResult, CrawlProgress, CrawlScope, CrawlStatus, MapResponse, MapResult, MapUrl
from ._types import ExtractBatchItem, ExtractBatchResponse, ExtractBatchResult, ExtractResponse, ExtractResult, Highlights, IncludeField, Result, SearchHighlight, SearchResponse, SearchResult, SearchResultItem

__all__ = [
    "SDK_VERSION", "Client", "AsyncClient", "ApiKey", "Mpp", "X402", "X402Challenge", "X402Payer", "MppParty",
    "Result", "SearchResult", "ExtractResult", "ExtractBatchResult", "ExtractBatchResponse", "ExtractBatchItem", "SearchResponse", "ExtractResponse", "SearchResultItem", "SearchHighlight", "Highlights", "IncludeField",
    "CrawlJob", "CrawlJobError", "CrawlJobList", "CrawlJobListResult", "CrawlJobResult", "CrawlProgress", "CrawlScope", "CrawlStatus", "MapResponse", "MapResult", "MapUrl",
    "NotaryError", "NotaryApiError", "BadRequestError", "AuthenticationError", "PaymentRequiredError", "PermissionDeniedError",
    "NotFoundError", "ConflictError", "UnprocessableError", "RateLimitError", "ServerError", "ConnectionError", "TimeoutError",
    "retry_after_seconds", "verify_receipt", "response_digest", "receipt_signing_input", "receipt_leaf", "ReceiptVerification", "ReceiptCheck",
    "leaf_hash", "node_hash", "root_from_inclusion_proof", "verify_inclusion", "verify_consistency",
    "Checkpoint", "VerifierKey", "open_checkpoint", "open_note", "parse_verifier_key",
    "build_envelope", "sign_envelope", "encode_envelope", "envelope_signing_input", "parse_share", "split_credits", "party_kid",
    "api_key_checksum", "api_key_problem", "canonical_json", "sha256_digest", "salted_request_digest", "request_digest_for",
    "jwk_thumbprint", "public_key_from_seed", "random_seed", "sign_ed25519", "verify_ed25519",
]
