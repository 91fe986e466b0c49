import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { ActionResult, Badge, ErrorNotice, Loading, Page, TextField, formatNumber, useAction, useLoad } from '../../components';
import type { CollectionView } from '../../types';

interface Defaults {
  credits_by_depth: number[];
  max_depth: number;
}

/** "1, 2,4" as credits by depth; empty: null (the price list's). Undefined when it is not a list of whole numbers. */
function pricesFrom(text: string): number[] | null | undefined {
  if (text.trim() === '') return null;
  const parts = text.split(',').map((p) => p.trim());
  return parts.every((p) => /^\d+$/.test(p)) ? parts.map(Number) : undefined;
}

function CollectionCard(props: { collection: CollectionView; defaults: Defaults; onChange: () => Promise<void> }): JSX.Element {
  const { collection: c, defaults } = props;
  const [prices, setPrices] = useState(c.credits_by_depth?.join(', ') ?? '');
  const [maxDepth, setMaxDepth] = useState(c.max_depth === null ? '' : String(c.max_depth));
  const action = useAction();
  const patch = (body: object, done: string) =>
    action.run(async () => {
      await api('PATCH', `/operator/collections/${c.name}`, body);
      await props.onChange();
      return done;
    });
  return (
    <article class="card" aria-labelledby={`c-${c.id}`} data-collection={c.name}>
      <header class="tenant-head">
        <h2 id={`c-${c.id}`}>{c.name}</h2>
        {c.public ? <Badge kind="ok">public</Badge> : <Badge>private</Badge>}
      </header>
      <p class="muted small break">
        {formatNumber(c.pages)} pages · {c.seeds.length ? `seeds: ${c.seeds.join(', ')}` : 'no seeds (filled by crawls that name it)'}
      </p>
      <form
        class="form-grid"
        onSubmit={(e) => {
          e.preventDefault();
          const list = pricesFrom(prices);
          if (list === undefined) {
            void action.run(async () => {
              throw new Error('Prices are whole credits per depth, comma-separated (e.g. 1, 2, 4); empty: the price list’s.');
            });
            return;
          }
          void patch({ credits_by_depth: list, max_depth: maxDepth.trim() === '' ? null : Number(maxDepth) }, 'Saved; it applies to the next search.');
        }}
      >
        <TextField
          label="Credits per search depth"
          name={`prices-${c.name}`}
          value={prices}
          onInput={setPrices}
          inputMode="text"
          hint={`From depth 1, comma-separated; empty: the price list's (${defaults.credits_by_depth.join(', ')}).`}
        />
        <TextField
          label="Deepest search"
          name={`depth-${c.name}`}
          type="number"
          min={1}
          max={defaults.max_depth}
          value={maxDepth}
          onInput={setMaxDepth}
          hint={`Empty: the server's maximum (${defaults.max_depth}).`}
        />
        <div class="form-actions">
          <button type="submit" class="button-small">
            Save<span class="visually-hidden"> {c.name}</span>
          </button>
          <button type="button" class="button-small" onClick={() => void patch({ public: !c.public }, c.public ? 'Private: only keys may read it.' : 'Public: pay-per-call payers may read it.')}>
            {c.public ? 'Make private' : 'Make public'}
            <span class="visually-hidden"> {c.name}</span>
          </button>
        </div>
      </form>
      <ActionResult action={action} />
    </article>
  );
}

export function Collections(): JSX.Element {
  const list = useLoad(() => api<{ collections: CollectionView[]; defaults: Defaults }>('GET', '/operator/collections'));
  const [name, setName] = useState('');
  const add = useAction();
  return (
    <Page title="Collections" intro="Named sets of pages searched apart: who may read them, their own prices and deepest search. Keys are limited to collections from the command line (notary keys create --collections).">
      <ErrorNotice error={list.error} />
      {!list.data ? <Loading /> : null}
      {list.data ? list.data.collections.map((c) => <CollectionCard key={`${c.id}-${c.credits_by_depth?.join(',') ?? ''}-${c.max_depth ?? ''}`} collection={c} defaults={list.data!.defaults} onChange={list.reload} />) : null}
      <section class="card" aria-labelledby="add-collection-title">
        <h2 id="add-collection-title">Add a collection</h2>
        <form
          class="form-grid"
          onSubmit={(e) => {
            e.preventDefault();
            void add.run(async () => {
              await api('POST', '/operator/collections', { name: name.trim() });
              setName('');
              await list.reload();
              return `Added ${name.trim()} (private). Point a seed at it on the Crawling page.`;
            });
          }}
        >
          <TextField label="Name" name="collection-name" required value={name} onInput={setName} hint="Lower-case letters, digits, - and _." />
          <div class="form-actions">
            <button type="submit" class="button-primary" disabled={add.busy}>
              Add collection
            </button>
          </div>
        </form>
        <ActionResult action={add} />
      </section>
    </Page>
  );
}
