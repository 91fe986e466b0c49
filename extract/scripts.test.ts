import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertRealContent } from './detect.js';
import { extractDocument } from './extract.js';
import { renderDocument } from './output.js';
import type { ExtractedDocument } from './types.js';
import { countCommas, countWords } from './words.js';

/**
 * Issue 32 item 1: text measures for every script. News pages in ten languages and ten scripts, written for these
 * tests (test/fixtures/extract-scripts/, see its README): each must come back as its article, without its navigation
 * and footer, and must not be refused. The Chinese, Japanese and Thai pages were refused before (empty_content,
 * js_shell_empty: words were counted between spaces); the Japanese one kept its ruby readings inline.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../test/fixtures/extract-scripts');

function page(name: string): { html: string; doc: ExtractedDocument } {
  const html = readFileSync(path.join(FIXTURES, name), 'utf8');
  return { html, doc: extractDocument(html, `https://example.org/${name}`) };
}

function verdict(html: string, doc: ExtractedDocument): string {
  try {
    assertRealContent(html, doc, false);
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
}

/** [page, script, first paragraph's opening, last paragraph's close, a navigation item, the footer's line]. */
const PAGES: Array<[string, string, string, string, string, string]> = [
  ['en-news.html', 'Latin', 'The harbour ferry service will run a fourth daily crossing', 'before deciding whether the evening crossing becomes permanent.', 'Obituaries', 'All rights reserved'],
  ['ru-news.html', 'Cyrillic', 'Центральная городская библиотека снова принимает читателей', 'Записаться можно бесплатно по паспорту.', 'Экономика', 'Все права защищены'],
  ['el-news.html', 'Greek', 'Από την επόμενη Δευτέρα τα ορεινά χωριά', 'για τα δύο πρώτα χρόνια.', 'Αθλητικά', 'Με επιφύλαξη παντός δικαιώματος'],
  ['ar-news.html', 'Arabic', 'افتتحت البلدية يوم الأحد أول محطة لتحلية مياه البحر', 'إذا أثبتت المحطة الأولى نجاحها.', 'اقتصاد', 'جميع الحقوق محفوظة'],
  ['he-news.html', 'Hebrew', 'העירייה החלה השבוע בעבודות לסלילת שביל אופניים', 'כשלושת אלפים רוכבים ביום.', 'כלכלה', 'כל הזכויות שמורות'],
  ['hi-news.html', 'Devanagari', 'रामपुर के सरकारी माध्यमिक विद्यालय में सोमवार को', 'ऐसी प्रयोगशालाएँ बनाई जाएँगी।', 'मनोरंजन', 'सर्वाधिकार सुरक्षित'],
  ['ko-news.html', 'Hangul', '시내를 가로지르는 하천을 따라 조성된 산책로가', '다리 두 곳을 추가로 건설할 계획이다.', '경제', '무단 전재 및 재배포 금지'],
  ['zh-news.html', 'Han', '本报讯（记者陈思远）经过近两年的改造施工', '公园北门附近的地铁站步行约五分钟即可到达。', '财经频道', '滨江日报社版权所有'],
  ['ja-news.html', 'Han and kana', '子どもへの虐待を防ぐため、市は来月から', '相談員の人数を確保し続けることが課題だと指摘しています。', 'スポーツ', '記事・写真の無断転載を禁じます'],
  ['th-news.html', 'Thai', 'เทศบาลเมืองได้เปิดตลาดน้ำริมคลองแห่งใหม่อย่างเป็นทางการ', 'โดยไม่เสียค่าใช้จ่าย', 'บันเทิง', 'สงวนลิขสิทธิ์'],
];

describe('news pages in ten scripts', () => {
  it.each(PAGES)('%s (%s): the article body, without navigation and footer, not refused', (name, _script, first, last, nav, footer) => {
    const { html, doc } = page(name);
    expect(verdict(html, doc)).toBe('ok');
    expect(doc.text).toContain(first);
    expect(doc.text).toContain(last);
    expect(doc.text).not.toContain(nav);
    expect(doc.text).not.toContain(footer);
    // Every page holds a few paragraphs of prose: dozens of words, whatever the script.
    expect(doc.wordCount).toBeGreaterThan(60);
  });

  it('the Chinese article (no spaces between words) is counted in words, not refused as empty_content', () => {
    const { html, doc } = page('zh-news.html');
    expect(verdict(html, doc)).toBe('ok');
    expect(doc.wordCount).toBeGreaterThan(250);
  });
});

describe('ruby annotations', () => {
  it('readings (<rt>, <rp>) are left out of text, markdown, html and the excerpt', async () => {
    const { doc } = page('ja-news.html');
    const opening = '子どもへの虐待を防ぐため';
    for (const mode of ['text', 'markdown', 'html', 'excerpt'] as const) {
      const out = await renderDocument(doc, mode);
      expect(out, mode).toContain(opening);
      expect(out, mode).toContain('保護者が一人で悩みを抱え込む前に');
      expect(out, mode).not.toMatch(/ぎゃくたい|ほごしゃ|子\(こ\)/);
    }
  });

  it('ruby without <rp>, and <rb> base text, read as the base text only', () => {
    const html = `<html><body><article><p>${'東京は<ruby><rb>日本</rb><rt>にほん</rt></ruby>の首都で、人口が最も多い都市です。'.repeat(3)}</p></article></body></html>`;
    expect(extractDocument(html, 'https://example.org/').text).toBe('東京は日本の首都で、人口が最も多い都市です。'.repeat(3));
  });
});

describe('right-to-left text', () => {
  it.each([
    ['ar-news.html', 'وقال مدير المشروع المهندس خالد النعيمي إن المحطة تعتمد على ألواح شمسية من طراز SolarMax 400 تغطي مساحة تزيد على ثلاثة هكتارات، وإن تكلفة إنتاج المياه انخفضت إلى نصف ما كانت عليه في المحطات القديمة التي تعمل بالوقود.'],
    ['he-news.html', 'לדברי מהנדס העיר, השביל יופרד מהכביש באמצעות גדר נמוכה ועצים, ובצמתים המרכזיים יותקנו רמזורים מיוחדים לרוכבים. לאורך השביל יוצבו גם עמדות להשכרת אופניים של חברת CityRide.'],
  ])('%s: each paragraph comes out in the source order (numbers and Latin names in place)', (name, paragraph) => {
    const { html, doc } = page(name);
    expect(html).toContain(paragraph);
    expect(doc.text.split('\n\n')).toContain(paragraph);
  });
});

describe('one word counter for every script', () => {
  it('counts words between spaces in spaced scripts, and segments unspaced ones', () => {
    expect(countWords('The ferry leaves at 21:40 — twice a week.')).toBe(9);
    expect(countWords('Городская библиотека открылась')).toBe(3);
    expect(countWords('도심 하천 산책로 전 구간 개통')).toBe(6);
    // 子ども | へ | の | 虐待 | を | 防ぐ: ICU's dictionary words, punctuation not counted.
    expect(countWords('子どもへの虐待を防ぐ。')).toBeGreaterThanOrEqual(5);
    expect(countWords('江边老码头改建为市民公园')).toBeGreaterThanOrEqual(4);
    expect(countWords('ตลาดน้ำริมคลองแห่งใหม่')).toBeGreaterThanOrEqual(4);
  });

  it('full-width and Arabic commas count as commas', () => {
    expect(countCommas('改造过程中，设计团队保留了门吊、仓库，')).toBe(3);
    expect(countCommas('بقدرة إنتاجية، وهو ما يكفي، a, b')).toBe(3);
  });
});

describe('full-width punctuation', () => {
  it('a short lead paragraph beside the article body that ends with 。 is a sentence of the article', () => {
    const body = '据市园林部门介绍，老码头建于上世纪六十年代，曾是本市最繁忙的货物集散地之一。随着港口功能向下游新港区转移，这里的仓库和吊车逐渐闲置。';
    const html = `<html><body><div class="menu"><a href="/a">首页</a> <a href="/b">新闻</a></div><div id="wrap"><p>本报讯，老码头改为公园。</p><div class="text"><p>${body}</p><p>${body}</p><p>${body}</p></div></div></body></html>`;
    expect(extractDocument(html, 'https://example.org/').text).toContain('本报讯，老码头改为公园。');
  });

  it('a trailing "related news" label with a full-width colon ends the article', () => {
    const body = '公园沿江修建了一条长约三点二公里的步道，并设置了亲水平台、儿童游乐区和多处休息座椅。为了减少对江岸生态的影响，施工方在低洼地带种植了芦苇。';
    const html = `<html><body><article><p>${body}</p><p>${body}</p><p>${body}</p><p>相关新闻：</p><p>本市今冬首场降雪或于下周到来，气象部门提醒市民注意出行安全。</p></article></body></html>`;
    const text = extractDocument(html, 'https://example.org/').text;
    expect(text).toContain('施工方在低洼地带种植了芦苇。');
    expect(text).not.toContain('首场降雪');
  });
});

describe('full-width title separators', () => {
  it('a full-width bar (｜) separates the page title from the site name, as " | " does', () => {
    expect(page('ja-news.html').doc.title).toBe('子どもへの虐待を防ぐ相談窓口、夜間も対応へ');
    expect(page('en-news.html').doc.title).toBe('Harbour ferries add an evening crossing from March');
  });
});

describe('pages without content stay refused in every script', () => {
  it('a Chinese page with only navigation and a copyright line is empty_content (the line now counts 20 words)', () => {
    const { html, doc } = page('zh-nav-only.html');
    expect(doc.wordCount).toBeGreaterThan(8);
    expect(verdict(html, doc)).toBe('empty_content');
  });
});
