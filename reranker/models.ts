/** Models notary knows how to fetch, pinned by content hash. Add a model by adding a row. */

export interface PinnedFile {
  /** Path inside the model repository and inside the cache folder, e.g. "onnx/model.onnx". */
  path: string;
  /** Lowercase hex sha256 the downloaded bytes must have. */
  sha256: string;
  /** Expected size, checked before hashing when known. */
  bytes?: number;
}

/** What a pinned model is for: the cross-encoder scores (query, passage) pairs, the bi-encoder embeds texts. */
export type PinnedKind = 'cross-encoder' | 'bi-encoder';

export interface PinnedModel {
  /** Cache folder name: <cache_dir>/<name>/. */
  name: string;
  kind: PinnedKind;
  /** Hub repository, e.g. "cross-encoder/ms-marco-MiniLM-L-6-v2". */
  repo: string;
  revision: string;
  /** The .onnx file among `files`. */
  onnxFile: string;
  files: readonly PinnedFile[];
}

export const PINNED_MODELS: readonly PinnedModel[] = [
  {
    // Hashes: onnx/model.onnx as published by the model's authors on the hub (91,011,230 bytes); tokenizer.json and
    // config.json are the real files of the repository (../shared/models/README.md).
    name: 'ms-marco-MiniLM-L-6-v2',
    kind: 'cross-encoder',
    repo: 'cross-encoder/ms-marco-MiniLM-L-6-v2',
    revision: 'main',
    onnxFile: 'onnx/model.onnx',
    files: [
      { path: 'onnx/model.onnx', sha256: '5d3e70fd0c9ff14b9b5169a51e957b7a9c74897afd0a35ce4bd318150c1d4d4a', bytes: 91_011_230 },
      { path: 'tokenizer.json', sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66', bytes: 711_396 },
      { path: 'config.json', sha256: '323c25e4da5068e10ed3a57723dae7d06f68bdefa2a9df4d9a30a0095953cdd7', bytes: 715 },
    ],
  },
  {
    // The official repository's own ONNX export, at the commit it is pinned to by public manifests.
    // onnx/model.onnx: sha256 6fd5d72f...6452 is the Git LFS oid the hub shows for the file ("Git LFS Details",
    // https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/blob/refs%2Fpr%2F83/onnx/model.onnx, the pull
    // request "Add new SentenceTransformer model with an onnx backend" by the hub's staff that added it; the same
    // oid on the hub's duplicates of the repository, e.g. huggingface.co/delwinn/all-MiniLM-L6-v2). Its size,
    // 90,405,214 bytes, and the revision 1110a243... come from public manifests that pin the same file (GitHub
    // code found through the project's code index), which also pin tokenizer.json (466,247 bytes) and config.json
    // at that revision with the hashes below. 1_Pooling/config.json is not needed (mean pooling is the bi-encoder
    // default); /work/shared's copy of it, vocab.txt and special_tokens_map.json match the published hashes.
    name: 'all-MiniLM-L6-v2',
    kind: 'bi-encoder',
    repo: 'sentence-transformers/all-MiniLM-L6-v2',
    revision: '1110a243fdf4706b3f48f1d95db1a4f5529b4d41',
    onnxFile: 'onnx/model.onnx',
    files: [
      { path: 'onnx/model.onnx', sha256: '6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452', bytes: 90_405_214 },
      { path: 'tokenizer.json', sha256: 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037', bytes: 466_247 },
      { path: 'config.json', sha256: '953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41' },
    ],
  },
];

/** The pinned model of a kind among `pins` (the first one). */
export function pinnedModel(pins: readonly PinnedModel[], kind: PinnedKind): PinnedModel | undefined {
  return pins.find((p) => p.kind === kind);
}

/** `<hub>/<repo>/resolve/<revision>/<path>`, as the Hugging Face hub serves raw files. */
export function pinnedFileUrl(hubUrl: string, model: PinnedModel, file: PinnedFile): string {
  const encodedPath = file.path.split('/').map(encodeURIComponent).join('/');
  return `${hubUrl.replace(/\/+$/, '')}/${model.repo}/resolve/${encodeURIComponent(model.revision)}/${encodedPath}`;
}
