export {
  ENVELOPE_SIGNING_PREFIX,
  MAX_ENVELOPE_LIFETIME_S,
  MPP_VERSION,
  authorizationHeader,
  buildEnvelope,
  decodeEnvelopeJson,
  encodeEnvelope,
  envelopeParameter,
  envelopeSigningInput,
  isMppAuthorization,
  kidOfSeed,
  parseEnvelope,
  signEnvelope,
  verifyPartySignature,
  type BuildEnvelopeOptions,
  type Envelope,
  type EnvelopeAuthorization,
  type EnvelopeParty,
  type ParsedEnvelope,
  type PartySigner,
  type UnsignedEnvelope,
} from './envelope.js';
export { mppError, MPP_REALM } from './errors.js';
export { generatePartyKey, readPartyKeyFile, writePartyKeyFile, type PartyKeyFile } from './key-file.js';
export { mppMode, mppPayerId, type MppConfig, type MppModeOptions } from './mode.js';
export { Parties, parsePublicKey, type PartyKey, type PartyKeyListing, type VerifiedParty } from './parties.js';
export { equalShares, formatShare, parseShare, SHARE_PATTERN, SHARE_SCALE, splitCredits } from './shares.js';
