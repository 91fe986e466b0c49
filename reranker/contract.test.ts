import { LexicalReranker } from './lexical.js';
import { OnnxReranker } from './onnx-reranker.js';
import { rerankerContract } from './reranker.contract.js';
import { crossEncoderDir } from '../testkit/models.js';

rerankerContract('ONNX cross-encoder (random weights)', () =>
  OnnxReranker.load(crossEncoderDir, { threads: 2, batchSize: 16, maxSeqLength: 256, source: 'config' }),
);
rerankerContract('lexical fallback', async () => new LexicalReranker());
