/** Models notary knows how to fetch, pinned by content hash. Add a model by adding a row. */

export interface PinnedFile {
  /** Path inside the model repository and inside the cache folder, e.g. "onnx/model.onnx". */
  path: string;
  /** Lowercase hex sha256 the downloaded bytes must have. */
  sha256: string;
  /** Expected size, checked before hashing when known. */
  bytes?: number;
}

export interface PinnedModel {
  /** Cache folder name: <cache_dir>/<name>/. */
  name: string;
  /** Hub repository, e.g. "cross-encoder/ms-marco-MiniLM-L-6-v2". */
  repo: string;
  revision: string;
  /** The .onnx file among `files`. */
  onnxFile: string;
  files: readonly PinnedFile[];
}

export const PINNED_MODELS: readonly PinnedModel[] = [
  {
    name: 'ms-marco-MiniLM-L-6-v2',
    repo: 'cross-encoder/ms-marco-MiniLM-L-6-v2',
    revision: 'main',
    onnxFile: 'onnx/model.onnx',
    files: [
      { path: 'onnx/model.onnx', sha256: '5d3e70fd0c9ff14b9b5169a51e957b7a9c74897afd0a35ce4bd318150c1d4d4a', bytes: 91_011_230 },
      { path: 'tokenizer.json', sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66', bytes: 711_396 },
      { path: 'config.json', sha256: '323c25e4da5068e10ed3a57723dae7d06f68bdefa2a9df4d9a30a0095953cdd7', bytes: 715 },
    ],
  },
];

/** `<hub>/<repo>/resolve/<revision>/<path>`, as the Hugging Face hub serves raw files. */
export function pinnedFileUrl(hubUrl: string, model: PinnedModel, file: PinnedFile): string {
  const encodedPath = file.path.split('/').map(encodeURIComponent).join('/');
  return `${hubUrl.replace(/\/+$/, '')}/${model.repo}/resolve/${encodeURIComponent(model.revision)}/${encodedPath}`;
}
