import { z } from 'zod';
import { FEATURES, pricingSchema, tierSchema, type Feature, type NotaryConfig, NotaryError } from '../core/index.js';
import type { SettingsRepository, StoredSetting } from '../storage/index.js';
import { Pricing, type PricingConfig } from './pricing.js';

/** A rate-limit tier with what it grants: the limits the rate-limit store applies, monthly credits, features. */
export type TierSettings = z.infer<typeof tierSchema>;

export interface SettingOrigin {
  /** `config` when the config file's value applies, `operator` when an operator's edit overrides it. */
  source: 'config' | 'operator';
  revision: number;
  updated_at: string | null;
  updated_by: string | null;
}

/** The prices and tiers in force at one moment. A call is priced and limited from one snapshot. */
export interface CatalogSnapshot {
  pricing: Pricing;
  tiers: Readonly<Record<string, TierSettings>>;
  defaultTier: string;
  anonymousTier: string;
  origins: { pricing: SettingOrigin; tiers: SettingOrigin };
}

/** Where the paid-call path reads the prices and tiers of the call it admits. */
export interface CatalogSource {
  current(): Promise<CatalogSnapshot>;
}

export interface CatalogDefaults {
  pricing: PricingConfig;
  tiers: Readonly<Record<string, TierSettings>>;
  defaultTier: string;
  anonymousTier: string;
  /** From which depth the cross-encoder gives rerank_score (null: none): such searches cost pricing.search.cross_encoder_credits more. */
  crossEncoderFrom?: () => number | null;
}

export function catalogDefaults(config: NotaryConfig, crossEncoderFrom?: () => number | null): CatalogDefaults {
  return {
    pricing: config.pricing,
    tiers: config.tiers,
    defaultTier: config.default_tier,
    anonymousTier: config.payments.anonymous_tier ?? config.default_tier,
    ...(crossEncoderFrom ? { crossEncoderFrom } : {}),
  };
}

const PRICING = 'pricing';
const TIERS = 'tiers';
const TIER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

function describeIssues(error: z.ZodError, root: string): string {
  return error.issues.map((issue) => `${[root, ...issue.path.map(String)].join('.')}: ${issue.message}`).join('; ');
}

/**
 * The live price list and tiers: the config file's values are the defaults, an operator's edits (kept in the
 * database) override them, and every node re-reads them at most `refreshMs` after they changed, so a change applies
 * to the next call without a restart. The node that makes an edit applies it at once. A call is quoted from the
 * snapshot it was admitted with, so its price is fixed before the work whatever changes meanwhile.
 */
export class Catalog implements CatalogSource {
  private snapshot: CatalogSnapshot;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<CatalogSnapshot> | null = null;
  private readonly now: () => number;

  constructor(
    private readonly store: SettingsRepository | null,
    private readonly defaults: CatalogDefaults,
    private readonly options: { refreshMs?: number; now?: () => number } = {},
  ) {
    this.now = options.now ?? (() => Date.now());
    this.snapshot = this.build([]);
    if (!store) this.loadedAt = Number.POSITIVE_INFINITY;
  }

  /** A catalog of the config's values only (no operator edits), for tools that have no database. */
  static fixed(defaults: CatalogDefaults): Catalog {
    return new Catalog(null, defaults);
  }

  /** The snapshot as last loaded, without touching the database. */
  get latest(): CatalogSnapshot {
    return this.snapshot;
  }

  async current(): Promise<CatalogSnapshot> {
    if (this.now() - this.loadedAt < (this.options.refreshMs ?? 2000)) return this.snapshot;
    return this.reload();
  }

  /** Reads the operators' edits now. */
  async reload(): Promise<CatalogSnapshot> {
    if (!this.store) return this.snapshot;
    this.loading ??= (async () => {
      try {
        const started = this.now();
        const rows = await this.store!.all();
        this.snapshot = this.build(rows);
        this.loadedAt = started;
        return this.snapshot;
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  /** Validates a whole price list against the config schema and makes it the one in force. */
  async setPricing(input: unknown, updatedBy: string): Promise<CatalogSnapshot> {
    const parsed = pricingSchema.safeParse(input);
    if (!parsed.success) throw new NotaryError('invalid_settings', describeIssues(parsed.error, PRICING));
    return this.write(PRICING, parsed.data, updatedBy);
  }

  /**
   * Validates the whole set of tiers and makes it the one in force. The default tier (of new tenants) and the tier of
   * calls without credentials must stay; tenants of a tier that is removed fall back to the default tier.
   */
  async setTiers(input: unknown, updatedBy: string): Promise<CatalogSnapshot> {
    const parsed = z.record(z.string(), tierSchema).safeParse(input);
    if (!parsed.success) throw new NotaryError('invalid_settings', describeIssues(parsed.error, TIERS));
    const tiers = parsed.data;
    const names = Object.keys(tiers);
    const bad = names.find((name) => !TIER_NAME.test(name));
    if (bad !== undefined) throw new NotaryError('invalid_settings', `tier name "${bad}" must be 1 to 32 lower-case letters, digits, - or _`);
    for (const required of new Set([this.defaults.defaultTier, this.defaults.anonymousTier])) {
      if (!(required in tiers)) throw new NotaryError('invalid_settings', `tier "${required}" is required: it is the default tier or the tier of calls without credentials`);
    }
    return this.write(TIERS, tiers, updatedBy);
  }

  /** Drops an operator's edit: the config file's value applies again. */
  async reset(name: 'pricing' | 'tiers'): Promise<CatalogSnapshot> {
    if (!this.store) throw new Error('this catalog has no database');
    await this.store.remove(name);
    return this.reload();
  }

  private async write(name: string, value: unknown, updatedBy: string): Promise<CatalogSnapshot> {
    if (!this.store) throw new Error('this catalog has no database');
    await this.store.put(name, value, updatedBy);
    return this.reload();
  }

  /**
   * Stored values were validated when written; one that no longer parses (a schema change) is ignored in favour of the
   * config's, rather than stopping the service.
   */
  private build(rows: readonly StoredSetting[]): CatalogSnapshot {
    const byName = new Map(rows.map((row) => [row.name, row]));
    const origin = (row: StoredSetting | undefined): SettingOrigin =>
      row ? { source: 'operator', revision: row.revision, updated_at: row.updated_at, updated_by: row.updated_by } : { source: 'config', revision: 0, updated_at: null, updated_by: null };
    const pricingRow = byName.get(PRICING);
    const pricingParsed = pricingRow ? pricingSchema.safeParse(pricingRow.value) : undefined;
    const tiersRow = byName.get(TIERS);
    const tiersParsed = tiersRow ? z.record(z.string(), tierSchema).safeParse(tiersRow.value) : undefined;
    const pricing = pricingParsed?.success ? pricingParsed.data : this.defaults.pricing;
    const tiers = tiersParsed?.success ? tiersParsed.data : this.defaults.tiers;
    return {
      pricing: new Pricing(pricing, { crossEncoderFrom: this.defaults.crossEncoderFrom ?? (() => null) }),
      tiers,
      defaultTier: this.defaults.defaultTier,
      anonymousTier: this.defaults.anonymousTier,
      origins: {
        pricing: origin(pricingParsed?.success ? pricingRow : undefined),
        tiers: origin(tiersParsed?.success ? tiersRow : undefined),
      },
    };
  }
}

/** The features a tenant has: an operator's override, else its tier's. */
export function tenantFeatures(snapshot: CatalogSnapshot, tenant: { tier: string; features: string | null }): Feature[] {
  if (tenant.features !== null) {
    const parsed = z.array(z.enum(FEATURES)).safeParse(JSON.parse(tenant.features));
    if (parsed.success) return parsed.data;
  }
  return (snapshot.tiers[tenant.tier] ?? snapshot.tiers[snapshot.defaultTier])?.features ?? [];
}

/** The tier whose limits apply to a tenant: its own, or the default tier when its own was removed. */
export function effectiveTier(snapshot: CatalogSnapshot, tier: string): { name: string; settings: TierSettings } {
  const own = snapshot.tiers[tier];
  if (own) return { name: tier, settings: own };
  const fallback = snapshot.tiers[snapshot.defaultTier];
  if (!fallback) throw new Error(`default tier "${snapshot.defaultTier}" is not defined`);
  return { name: snapshot.defaultTier, settings: fallback };
}
