import { describe, expect, it } from 'vitest';
import { fixtureGold, languageRows, type LanguagePage, type PageOutcome } from './extract-languages.js';
import { segmentWords } from '../eval-extract-metric.js';

describe('the per-language extraction report', () => {
  it('reads a fixture’s gold between its markers, without ruby readings or spaces inside a word', () => {
    const html = '<nav>Home</nav><!-- gold:start --><p><ruby>子<rp>(</rp><rt>こ</rt><rp>)</rp></ruby>どもへの<a href="#">虐待</a>を防ぐ</p><p>次へ</p><!-- gold:end --><footer>©</footer>';
    expect(fixtureGold(html)).toBe('子どもへの虐待を防ぐ 次へ');
    expect(fixtureGold('<p>no markers</p>')).toBe('');
  });

  it('counts unspaced scripts word by word', () => {
    expect(segmentWords('市は来月から窓口を開く').length).toBeGreaterThan(3);
    expect(segmentWords('The Harbour, ferry!')).toEqual(['the', 'harbour', 'ferry']);
  });

  it('groups by language, counts refusals and tells false refusals from right ones', () => {
    const page = (id: string, language: string, gold: string): LanguagePage => ({ set: 's', id, url: `https://x.test/${id}`, html: '', gold, language });
    const pages = [page('a', 'zh', '正文'), page('b', 'zh', ''), page('c', 'en', 'text'), page('d', 'en', '')];
    const outcomes: PageOutcome[] = [
      { id: 'a', language: 'zh', refused: 'empty_content', counts: { tp: 0, fp: 0, fn: 1 } },
      { id: 'b', language: 'zh', refused: 'empty_content', counts: { tp: 0, fp: 0, fn: 0 } },
      { id: 'c', language: 'en', refused: null, counts: { tp: 1, fp: 0, fn: 0 } },
      { id: 'd', language: 'en', refused: null, counts: { tp: 0, fp: 1, fn: 0 } },
    ];
    const rows = languageRows('s', pages, outcomes);
    expect(rows.map((r) => r.language)).toEqual(['en', 'zh', 'all']);
    const zh = rows.find((r) => r.language === 'zh');
    expect(zh).toMatchObject({ pages: 2, refusals: { empty_content: 2 }, falsely_refused: ['a'], falsely_accepted: [] });
    // The right refusal scores as a perfect page; the false one as a page with nothing found.
    expect(zh?.recall).toBeCloseTo(0.5);
    expect(rows.find((r) => r.language === 'en')).toMatchObject({ falsely_refused: [], falsely_accepted: ['d'] });
  });
});
