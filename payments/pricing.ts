import { DECIMAL_PATTERN, type Feature, type NotaryConfig, NotaryError } from '../core/index.js';

export type PricingConfig = NotaryConfig['pricing'];

/** What a paid call asks for, from its validated request: enough to price it before any work. */
export type PriceRequest =
  /** `creditsByDepth`: the searched collection's own prices (CollectionSettings), replacing the price list's. */
  | { operation: 'search'; depth: number; creditsByDepth?: readonly number[] }
  /**
   * `render` as requested, or the deployment's default when the request names none; `urls`, for a batch, how many URLs
   * it quotes (each at the per-URL price; absent: one).
   */
  | { operation: 'extract'; render: 'auto' | 'never' | 'always'; urls?: number }
  | { operation: 'map' }
  /** A crawl job: quoted at its page budget, charged for the pages it stored (Pricing.partOf). */
  | { operation: 'crawl'; pages: number };

export type Operation = PriceRequest['operation'];

/** The claim a signed receipt makes for each operation. */
export const OPERATION_CLAIMS = {
  search: 'search_call_consumed',
  extract: 'extract_call_consumed',
  map: 'map_call_consumed',
  crawl: 'crawl_pages_consumed',
} as const satisfies Record<Operation, string>;

/** An amount of an asset, exact: `atomic` smallest units, `decimal` the same written with the asset's decimals. */
export interface MoneyAmount {
  atomic: bigint;
  decimal: string;
  asset: string;
  decimals: number;
}

/** The quote of one call. It is fixed before the work and never exceeded by the charge. */
export interface Price {
  operation: Operation;
  /** What was priced (depth, render), for usage records. */
  request: PriceRequest;
  /** The tenant features the call needs (a key of a tenant without one of them is refused). */
  features: Feature[];
  credits: number;
  /**
   * How many units the quote covers: the URLs of a batch extraction, 1 for every other call. A call that delivers
   * fewer (some URLs failed) is charged `Pricing.partOf` that many; only a mode that can settle less than it
   * authorized may pay a quote of more than one unit (PaymentMode.settlesLess).
   */
  units: number;
  /** The money amount for pay-per-call modes: credits times the price of one credit. */
  amount: MoneyAmount;
  /** Ledger wording, e.g. "search depth 2". */
  description: string;
  claim: (typeof OPERATION_CLAIMS)[Operation];
}

/** Parses a decimal string into smallest units exactly; refuses more fractional digits than the asset has. */
export function decimalToAtomic(value: string, decimals: number): bigint {
  if (!DECIMAL_PATTERN.test(value)) throw new NotaryError('invalid_config', `"${value}" is not a decimal number`);
  const [whole = '0', fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  if (trimmed.length > decimals) {
    throw new NotaryError('invalid_config', `"${value}" has more than ${decimals} decimal places, the asset's smallest unit`);
  }
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(trimmed.padEnd(decimals, '0') || '0');
}

/** Writes smallest units as a decimal string with no trailing zeros: 1500n with 6 decimals is "0.0015". */
export function atomicToDecimal(atomic: bigint, decimals: number): string {
  if (atomic < 0n) throw new RangeError('negative amount');
  const scale = 10n ** BigInt(decimals);
  const whole = atomic / scale;
  const fraction = (atomic % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

export interface PriceTableRow {
  call: string;
  credits: number;
  amount: string;
}

/**
 * The one pricing module: every paid call is priced here from its validated request, before any work, and every
 * payment mode charges exactly this price. `render: "auto"` costs the static price even when the page turns out to
 * need the browser, so nobody is charged more than the quote; `render: "always"` costs the rendered price.
 */
export class Pricing {
  private readonly creditAtomic: bigint;

  /**
   * `crossEncoderFrom` says from which depth the search service's rerank_score comes from the cross-encoder (null:
   * none loaded, or none serves a depth): those searches cost `cross_encoder_credits` more, so a lexical fallback or a
   * bi-encoder-only service is never charged for a model it does not run.
   */
  constructor(
    private readonly config: PricingConfig,
    private readonly scorers: { crossEncoderFrom: () => number | null } = { crossEncoderFrom: () => null },
  ) {
    this.creditAtomic = decimalToAtomic(config.credit_price.amount, config.credit_price.decimals);
  }

  get asset(): { symbol: string; decimals: number; creditPrice: string } {
    return { symbol: this.config.credit_price.asset, decimals: this.config.credit_price.decimals, creditPrice: this.config.credit_price.amount };
  }

  price(request: PriceRequest): Price {
    switch (request.operation) {
      case 'search': {
        if (!Number.isSafeInteger(request.depth) || request.depth < 1) throw new RangeError(`no price for depth ${request.depth}`);
        const table = request.creditsByDepth ?? this.config.search.credits_by_depth;
        const passes = table[Math.min(request.depth, table.length) - 1];
        if (passes === undefined) throw new RangeError(`no price for depth ${request.depth}`);
        const from = this.scorers.crossEncoderFrom();
        if (from !== null && request.depth >= from) {
          return this.quote(request, passes + this.config.search.cross_encoder_credits, `search depth ${request.depth} (cross-encoder)`);
        }
        return this.quote(request, passes, `search depth ${request.depth}`);
      }
      case 'extract': {
        const rendered = request.render === 'always';
        const each = rendered ? this.config.extract.credits_rendered : this.config.extract.credits;
        const name = rendered ? 'extract rendered' : 'extract';
        if (request.urls === undefined) return this.quote(request, each, name);
        const urls = request.urls;
        if (!Number.isSafeInteger(urls) || urls < 1) throw new RangeError(`no price for ${urls} URLs`);
        return this.quote(request, each * urls, `${name}, ${urls} URL${urls === 1 ? '' : 's'}`, urls);
      }
      case 'map':
        return this.quote(request, this.config.map.credits, 'map');
      case 'crawl': {
        const pages = request.pages;
        if (!Number.isSafeInteger(pages) || pages < 1) throw new RangeError(`no price for ${pages} pages`);
        return this.quote(request, this.config.crawl.credits_per_page * pages, `crawl, ${pages} page${pages === 1 ? '' : 's'}`, pages);
      }
    }
  }

  /**
   * The charge of a call that delivered `units` of the units it was quoted for (a batch whose other URLs failed):
   * that many units at the quote's per-unit price, never more than the quote. All of them: the quote itself.
   */
  partOf(quote: Price, units: number): Price {
    if (!Number.isSafeInteger(units) || units < 1 || units > quote.units) throw new RangeError(`${units} of ${quote.units} quoted units`);
    if (units === quote.units) return quote;
    if (quote.request.operation === 'crawl') {
      const part = this.price({ operation: 'crawl', pages: units });
      return { ...part, description: `crawl, ${units} of ${quote.units} pages` };
    }
    if (quote.request.operation !== 'extract' || quote.request.urls === undefined) throw new RangeError(`${quote.description} is not quoted per unit`);
    const part = this.price({ ...quote.request, urls: units });
    return { ...part, description: `${quote.description.replace(/, \d+ URLs?$/, '')}, ${units} of ${quote.units} URLs` };
  }

  /** The money amount of a number of credits. */
  amountFor(credits: number): MoneyAmount {
    const atomic = this.creditAtomic * BigInt(credits);
    const { asset, decimals } = this.config.credit_price;
    return { atomic, decimal: atomicToDecimal(atomic, decimals), asset, decimals };
  }

  /** Every distinct call with its price, for documentation and status output. */
  table(maxDepth: number): PriceTableRow[] {
    const rows: PriceTableRow[] = [];
    for (let depth = 1; depth <= maxDepth; depth++) {
      const price = this.price({ operation: 'search', depth });
      rows.push(this.row(price.description, price));
    }
    rows.push(this.row('extract (render never or auto)', this.price({ operation: 'extract', render: 'auto' })));
    rows.push(this.row('extract (render always)', this.price({ operation: 'extract', render: 'always' })));
    rows.push(this.row('map (one page of URLs)', this.price({ operation: 'map' })));
    rows.push(this.row('crawl job (per stored page)', this.price({ operation: 'crawl', pages: 1 })));
    return rows;
  }

  private row(call: string, price: Price): PriceTableRow {
    return { call, credits: price.credits, amount: `${price.amount.decimal} ${price.amount.asset}` };
  }

  /** From which depth searches are judged by the cross-encoder and cost its credits (null: none is loaded). */
  get crossEncoderFrom(): number | null {
    return this.scorers.crossEncoderFrom();
  }

  /** The price list this snapshot was built from. */
  get settings(): PricingConfig {
    return this.config;
  }

  private quote(request: PriceRequest, credits: number, description: string, units = 1): Price {
    const { operation } = request;
    return {
      operation,
      request,
      features: requiredFeatures(request),
      credits,
      units,
      amount: this.amountFor(credits),
      description,
      claim: OPERATION_CLAIMS[operation],
    };
  }
}

/** Search at depth 2 and up needs reflection besides search; render "always" needs rendered extraction besides extraction. */
export function requiredFeatures(request: PriceRequest): Feature[] {
  switch (request.operation) {
    case 'search':
      return request.depth > 1 ? ['search', 'search_reflection'] : ['search'];
    case 'extract':
      return request.render === 'always' ? ['extract', 'extract_render'] : ['extract'];
    case 'map':
      return ['map'];
    case 'crawl':
      return ['crawl'];
  }
}
