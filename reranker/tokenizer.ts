import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { NotaryError } from '../core/index.js';

/** Model inputs for one sequence (or pair), before padding. */
export interface EncodedInput {
  inputIds: number[];
  tokenTypeIds: number[];
}

type TemplatePiece = { kind: 'special'; ids: number[]; typeId: number } | { kind: 'sequence'; which: 'A' | 'B'; typeId: number };

interface PostProcessorTemplate {
  single: TemplatePiece[];
  pair: TemplatePiece[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseTemplateProcessing(processor: Record<string, unknown>): PostProcessorTemplate {
  const specials = isRecord(processor['special_tokens']) ? processor['special_tokens'] : {};
  const parse = (items: unknown): TemplatePiece[] => {
    if (!Array.isArray(items)) throw new Error('TemplateProcessing template is not a list');
    return items.map((item: unknown): TemplatePiece => {
      if (isRecord(item) && isRecord(item['SpecialToken'])) {
        const token = item['SpecialToken'];
        const entry = specials[String(token['id'])];
        if (!isRecord(entry) || !Array.isArray(entry['ids'])) throw new Error(`special token ${String(token['id'])} has no ids`);
        return { kind: 'special', ids: entry['ids'].map(Number), typeId: Number(token['type_id'] ?? 0) };
      }
      if (isRecord(item) && isRecord(item['Sequence'])) {
        const sequence = item['Sequence'];
        const which = sequence['id'] === 'B' ? 'B' : 'A';
        return { kind: 'sequence', which, typeId: Number(sequence['type_id'] ?? 0) };
      }
      throw new Error('unknown TemplateProcessing piece');
    });
  };
  return { single: parse(processor['single']), pair: parse(processor['pair']) };
}

function parseBertProcessing(processor: Record<string, unknown>): PostProcessorTemplate {
  const cls = processor['cls'];
  const sep = processor['sep'];
  if (!Array.isArray(cls) || !Array.isArray(sep)) throw new Error('BertProcessing without cls/sep');
  const clsId = Number(cls[1]);
  const sepId = Number(sep[1]);
  return {
    single: [
      { kind: 'special', ids: [clsId], typeId: 0 },
      { kind: 'sequence', which: 'A', typeId: 0 },
      { kind: 'special', ids: [sepId], typeId: 0 },
    ],
    pair: [
      { kind: 'special', ids: [clsId], typeId: 0 },
      { kind: 'sequence', which: 'A', typeId: 0 },
      { kind: 'special', ids: [sepId], typeId: 0 },
      { kind: 'sequence', which: 'B', typeId: 1 },
      { kind: 'special', ids: [sepId], typeId: 1 },
    ],
  };
}

function parsePostProcessor(processor: unknown): PostProcessorTemplate {
  if (!isRecord(processor)) throw new Error('tokenizer.json has no post_processor');
  if (processor['type'] === 'TemplateProcessing') return parseTemplateProcessing(processor);
  if (processor['type'] === 'BertProcessing') return parseBertProcessing(processor);
  throw new Error(`unsupported post_processor type ${String(processor['type'])}`);
}

function specialCount(pieces: readonly TemplatePiece[]): number {
  return pieces.reduce((sum, piece) => sum + (piece.kind === 'special' ? piece.ids.length : 0), 0);
}

/**
 * Lengths after Hugging Face tokenizers' `longest_first` truncation of a pair to `budget` content tokens (the
 * Rust implementation, not the one-token-at-a-time loop of the Python slow tokenizers).
 */
export function longestFirstLengths(lengthA: number, lengthB: number, budget: number): [number, number] {
  if (lengthA + lengthB <= budget) return [lengthA, lengthB];
  const swap = lengthA > lengthB;
  let short = swap ? lengthB : lengthA;
  let long: number;
  if (short > budget) long = short;
  else long = Math.max(short, budget - short);
  if (short + long > budget) {
    short = Math.floor(budget / 2);
    long = short + (budget % 2);
  }
  const [a, b] = swap ? [long, short] : [short, long];
  return [Math.min(a, lengthA), Math.min(b, lengthB)];
}

/**
 * Whether a text's tokens are those of its space-separated pieces, one after the other: a BERT normaliser (per
 * character), a pre-tokenizer that splits at whitespace (and punctuation), WordPiece within each piece, and no added
 * token holding a space. Byte-level BPE, for one, is not: it keeps the space with the word after it.
 */
function splitsAtSpaces(json: Record<string, unknown>): boolean {
  const type = (value: unknown): unknown => (isRecord(value) ? value['type'] : undefined);
  const added = Array.isArray(json['added_tokens']) ? json['added_tokens'] : [];
  return (
    type(json['normalizer']) === 'BertNormalizer' &&
    ['BertPreTokenizer', 'Whitespace', 'WhitespaceSplit'].includes(String(type(json['pre_tokenizer']))) &&
    type(json['model']) === 'WordPiece' &&
    added.every((token: unknown) => isRecord(token) && typeof token['content'] === 'string' && !/\s/u.test(token['content']))
  );
}

/** Space-separated pieces whose token ids a tokenizer remembers (then it starts again), and the longest piece remembered. */
const PIECE_CACHE = 50_000;
const PIECE_CACHE_CHARS = 48;

/** Characters of passage looked at per content token before the whole text is tokenized (see encodeHead). */
const HEAD_CHARS_PER_TOKEN = 8;
const HEAD_MIN_CHARS = 2048;

/**
 * BERT WordPiece tokenizer built from a model's tokenizer.json, with pair encoding, token type ids and
 * `longest_first` truncation. Normalisation, pre-tokenisation and WordPiece come from @huggingface/tokenizers;
 * the post-processor template and truncation are applied here because that library has no truncation.
 */
export class BertPairTokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly template: PostProcessorTemplate;
  readonly padId: number;
  /**
   * Token ids of space-separated pieces seen before, when the tokenizer splits at spaces (splitsAtSpaces): the
   * cross-encoder's texts are made of a corpus's words, which tokenizing again costs far more than a lookup.
   */
  private readonly pieces: Map<string, readonly number[]> | null;

  constructor(tokenizerJson: unknown, tokenizerConfig: unknown = {}) {
    if (!isRecord(tokenizerJson)) throw new Error('tokenizer.json is not an object');
    this.tokenizer = new Tokenizer(tokenizerJson, isRecord(tokenizerConfig) ? tokenizerConfig : {});
    this.template = parsePostProcessor(tokenizerJson['post_processor']);
    const padding = tokenizerJson['padding'];
    const padFromJson = isRecord(padding) ? padding['pad_id'] : undefined;
    this.padId = typeof padFromJson === 'number' ? padFromJson : (this.tokenizer.token_to_id('[PAD]') ?? 0);
    this.pieces = splitsAtSpaces(tokenizerJson) ? new Map() : null;
  }

  /** Reads `<dir>/tokenizer.json` (and tokenizer_config.json when present). */
  static fromDir(dir: string): BertPairTokenizer {
    const file = path.join(dir, 'tokenizer.json');
    try {
      const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const configFile = path.join(dir, 'tokenizer_config.json');
      const config: unknown = existsSync(configFile) ? JSON.parse(readFileSync(configFile, 'utf8')) : {};
      return new BertPairTokenizer(json, config);
    } catch (err) {
      throw new NotaryError('model_unavailable', `cannot load tokenizer ${file}: ${(err as Error).message}`);
    }
  }

  /** Content token ids of `text`, without special tokens. */
  tokenIds(text: string): number[] {
    const pieces = this.pieces;
    if (!pieces) return this.encodeText(text);
    const ids: number[] = [];
    for (const piece of text.split(' ')) {
      if (piece.length === 0) continue;
      let found = pieces.get(piece);
      if (found === undefined) {
        found = this.encodeText(piece);
        if (piece.length <= PIECE_CACHE_CHARS) {
          if (pieces.size >= PIECE_CACHE) pieces.clear();
          pieces.set(piece, found);
        }
      }
      for (const id of found) ids.push(id);
    }
    return ids;
  }

  /** Space-separated pieces whose ids are remembered now. */
  get rememberedPieces(): number {
    return this.pieces?.size ?? 0;
  }

  /** Content token ids of `text` from the tokenizer itself (no cache). */
  encodeText(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /**
   * Token ids of a text of which only the first `needed` tokens can be kept. A long text is cut at a space after
   * enough characters: normalisation is per character and the pre-tokenizer splits at spaces, so the tokens of the
   * head are exactly the first tokens of the whole text. Returns `complete: false` when the head was cut.
   */
  private encodeHead(text: string, needed: number): { ids: number[]; complete: boolean } {
    const window = Math.max(HEAD_MIN_CHARS, needed * HEAD_CHARS_PER_TOKEN);
    if (text.length > window) {
      const cut = text.indexOf(' ', window);
      if (cut > 0) {
        const ids = this.tokenIds(text.slice(0, cut));
        if (ids.length >= needed) return { ids, complete: false };
      }
    }
    return { ids: this.tokenIds(text), complete: true };
  }

  /** Number of special tokens the pair template adds. */
  get pairSpecialTokens(): number {
    return specialCount(this.template.pair);
  }

  /**
   * [CLS] A [SEP] B [SEP] (per the model's template) truncated `longest_first` to `maxLength` tokens in all.
   * `queryIds` may be passed in when the same query is paired with many passages.
   */
  encodePair(query: string, passage: string, maxLength: number, queryIds: number[] = this.tokenIds(query)): EncodedInput {
    const budget = Math.max(0, maxLength - this.pairSpecialTokens);
    let head = this.encodeHead(passage, budget);
    // With a cut head the passage is at least head.ids.length long; that is enough to decide the truncation as
    // long as the query is shorter than the head (then the passage is the longer side either way).
    if (!head.complete && queryIds.length >= head.ids.length) head = { ids: this.tokenIds(passage), complete: true };
    const [keepA, keepB] = longestFirstLengths(queryIds.length, head.ids.length, budget);
    return this.applyTemplate(this.template.pair, queryIds.slice(0, keepA), head.ids.slice(0, keepB));
  }

  /** [CLS] A [SEP] truncated to `maxLength` tokens, for bi-encoders. */
  encodeSingle(text: string, maxLength: number): EncodedInput {
    const budget = Math.max(0, maxLength - specialCount(this.template.single));
    const head = this.encodeHead(text, budget);
    return this.applyTemplate(this.template.single, head.ids.slice(0, budget), []);
  }

  private applyTemplate(pieces: readonly TemplatePiece[], a: readonly number[], b: readonly number[]): EncodedInput {
    const inputIds: number[] = [];
    const tokenTypeIds: number[] = [];
    for (const piece of pieces) {
      const ids = piece.kind === 'special' ? piece.ids : piece.which === 'A' ? a : b;
      for (const id of ids) {
        inputIds.push(id);
        tokenTypeIds.push(piece.typeId);
      }
    }
    return { inputIds, tokenTypeIds };
  }
}
