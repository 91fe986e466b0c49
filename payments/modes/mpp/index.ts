import { configSection } from '../../../core/index.js';
import type { NotaryPlugin } from '../../plugin.js';
import { addMppCommands } from './cli.js';
import { partyKeyRoutes } from './dashboard-routes.js';
import { addPartyCommands } from './party-commands.js';
import { mppConfigFragment } from './config.js';
import { MPP_ERROR_CODES } from './errors.js';
import { mppPartiesMigration, mppPartyKeyCollectionsMigration } from './migrations.js';
import { MPP_RESPONSE_MEMBERS } from './response-members.js';
import { mppMode } from './mode.js';
import { Parties } from './parties.js';

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
export { mppMode, mppPayerId, MPP_SECURITY_SCHEME, type MppConfig, type MppModeOptions } from './mode.js';
export { Parties, parsePublicKey, type PartyKey, type PartyKeyListing, type VerifiedParty } from './parties.js';
export { equalShares, formatShare, parseShare, SHARE_PATTERN, SHARE_SCALE, splitCredits } from './shares.js';
export { mppConfigFragment, mppModeSchema, type MppSettings } from './config.js';
export { MPP_ERROR_CODES } from './errors.js';

export { mppParties } from './service.js';

/** `Authorization: MPP envelope=...`: several parties (tenants with Ed25519 keys) share one call. */
export const mppPlugin: NotaryPlugin = {
  name: 'mpp',
  config: [mppConfigFragment],
  errors: MPP_ERROR_CODES,
  responseMembers: MPP_RESPONSE_MEMBERS,
  migrations: { '0016_mpp_parties': mppPartiesMigration, '0034_party_key_collections': mppPartyKeyCollectionsMigration },
  mode: {
    enabled: (config) => configSection(config, mppConfigFragment).enabled,
    build: (deps) => mppMode({ config: configSection(deps.config, mppConfigFragment), accounts: deps.accounts, parties: new Parties(deps.storage.db) }),
  },
  cli: (program, context) => {
    addMppCommands(program);
    addPartyCommands(program, context);
  },
  tenantRoutes: partyKeyRoutes,
};
