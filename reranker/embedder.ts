/**
 * Turns texts into unit-length vectors for dense retrieval. `model` names the model and its exact weights (so vectors
 * of different models or exports are never compared); a bi-encoder reranker supplies one (OnnxReranker.embedder()).
 */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}
