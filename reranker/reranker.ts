export type ScorerKind = 'cross-encoder' | 'bi-encoder' | 'lexical';

export interface RerankerInfo {
  kind: ScorerKind;
  /** Model name or directory, e.g. "ms-marco-MiniLM-L-6-v2 (/path)"; "lexical" for the fallback. */
  model: string;
  /** Where the model came from: "config", "env", "cache", "download", "fallback". */
  source: string;
  /** Why this scorer is the live one, in a sentence (e.g. why there is no neural model). */
  why?: string;
}

/**
 * Scores passages against a query. Every score is within [0, 1]; higher is more relevant.
 * Implementations: ONNX cross-encoder (sigmoid of the logit), ONNX bi-encoder (cosine mapped to [0,1]), lexical fallback.
 */
export interface Reranker {
  readonly info: RerankerInfo;
  score(query: string, passages: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}
