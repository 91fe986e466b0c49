import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api';
import { ActionResult, ConfirmButton, ErrorNotice, Loading, Page, PriceTable, TextField, formatDate, useAction, useLoad } from '../../components';
import type { Origin, PricingAnswer, PricingSettings } from '../../types';

export function OriginNote(props: { origin: Origin; what: string }): JSX.Element {
  return (
    <p class="muted" data-testid="origin">
      {props.origin.source === 'config'
        ? `These ${props.what} come from the configuration file. Saving here keeps your edit in the database, where it overrides the file until you reset it.`
        : `Edited by ${props.origin.updated_by ?? 'an operator'} on ${formatDate(props.origin.updated_at)} (revision ${props.origin.revision}); they override the configuration file until you reset them.`}
    </p>
  );
}

export function Pricing(): JSX.Element {
  const answer = useLoad(() => api<PricingAnswer>('GET', '/operator/pricing'));
  const [depths, setDepths] = useState<string[]>([]);
  const [crossEncoder, setCrossEncoder] = useState('');
  const [extract, setExtract] = useState('');
  const [rendered, setRendered] = useState('');
  const [amount, setAmount] = useState('');
  const [asset, setAsset] = useState('');
  const [decimals, setDecimals] = useState('');
  const save = useAction();
  const fill = (pricing: PricingSettings, maxDepth: number) => {
    // Only the depths a call may ask for (1 to search.max_depth): a price above it could never be charged.
    const table = pricing.search.credits_by_depth;
    setDepths(Array.from({ length: Math.max(1, maxDepth) }, (_, i) => String(table[Math.min(i, table.length - 1)] ?? 0)));
    setCrossEncoder(String(pricing.search.cross_encoder_credits));
    setExtract(String(pricing.extract.credits));
    setRendered(String(pricing.extract.credits_rendered));
    setAmount(pricing.credit_price.amount);
    setAsset(pricing.credit_price.asset);
    setDecimals(String(pricing.credit_price.decimals));
  };
  useEffect(() => {
    if (answer.data) fill(answer.data.pricing, answer.data.max_depth);
  }, [answer.data]);
  const submit = (event: Event) => {
    event.preventDefault();
    void save.run(async () => {
      const body: PricingSettings = {
        search: { credits_by_depth: depths.map(Number), cross_encoder_credits: Number(crossEncoder) },
        extract: { credits: Number(extract), credits_rendered: Number(rendered) },
        credit_price: { amount, asset, decimals: Number(decimals) },
      };
      await api<PricingAnswer>('PUT', '/operator/pricing', body);
      await answer.reload();
      return 'Saved: the next call is priced with it.';
    });
  };
  const data = answer.data;
  return (
    <Page title="Prices" intro="Credits per call and the money price of a credit for pay-per-call modes. A change applies to the next call; a call already quoted keeps its quote.">
      <ErrorNotice error={answer.error} />
      {!data ? <Loading /> : null}
      {data ? (
        <>
          <OriginNote origin={data.origin} what="prices" />
          <form onSubmit={submit} class="card">
            <fieldset class="form-grid" data-testid="depth-prices">
              <legend>Search, credits by depth</legend>
              <p class="hint wide">Calls may ask for depth 1 to {data.max_depth} (search.max_depth in the configuration file).</p>
              {depths.map((value, i) => (
                <TextField
                  key={i}
                  label={`Depth ${i + 1}`}
                  name={`depth-${i + 1}`}
                  type="number"
                  min={0}
                  required
                  value={value}
                  onInput={(v) => setDepths((current) => current.map((old, j) => (j === i ? v : old)))}
                />
              ))}
              <TextField
                label="Cross-encoder, added"
                name="cross-encoder-credits"
                type="number"
                min={0}
                required
                value={crossEncoder}
                onInput={setCrossEncoder}
                hint={`Added to searches the cross-encoder judges (depth ${data.cross_encoder_from ?? 'none: not loaded'}${data.cross_encoder_from !== null ? ' and up' : ''}).`}
              />
            </fieldset>
            <fieldset class="form-grid">
              <legend>Extraction, credits</legend>
              <TextField label="Static (render never or auto)" name="extract" type="number" min={0} required value={extract} onInput={setExtract} />
              <TextField label="Rendered (render always)" name="extract-rendered" type="number" min={0} required value={rendered} onInput={setRendered} />
            </fieldset>
            <fieldset class="form-grid">
              <legend>Price of one credit (payments on chain)</legend>
              <TextField label="Amount" name="credit-amount" required value={amount} onInput={setAmount} inputMode="decimal" hint="A decimal, e.g. 0.001" />
              <TextField label="Asset" name="credit-asset" required value={asset} onInput={setAsset} />
              <TextField label="Decimals" name="credit-decimals" type="number" min={0} max={36} required value={decimals} onInput={setDecimals} hint="Of the asset's smallest unit (USDC: 6)." />
            </fieldset>
            <div class="form-actions">
              <button type="submit" class="button-primary" disabled={save.busy}>
                Save prices
              </button>
              {data.origin.source === 'operator' ? (
                <ConfirmButton
                  label="Reset"
                  confirm="Go back to the configuration file's prices?"
                  onConfirm={() =>
                    void save.run(async () => {
                      await api('DELETE', '/operator/pricing');
                      await answer.reload();
                      return 'The configuration file’s prices apply again.';
                    })
                  }
                />
              ) : null}
            </div>
            <ActionResult action={save} />
          </form>
          <h2>In force</h2>
          <PriceTable rows={data.table} amountLabel="Amount" testid="price-table" />
        </>
      ) : null}
    </Page>
  );
}
