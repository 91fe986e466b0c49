export interface HeadingBlock {
  type: 'heading';
  /** 1..6, from h1..h6. */
  level: number;
  text: string;
}

export interface TextBlock {
  type: 'paragraph' | 'list' | 'code' | 'table' | 'quote';
  /**
   * Whitespace-normalised text. Lists hold one item a line; tables one row a line with cells joined by " | ";
   * code keeps its line breaks and indentation.
   */
  text: string;
  /** Links inside the block, in order (absolute hrefs; text as it appears in `text`). */
  links?: BlockLink[];
  /** Lists: the items, and whether the list was an <ol>. */
  items?: string[];
  ordered?: boolean;
  /** Tables: the cells row by row; `headerRow` when the first row holds <th> cells. */
  rows?: string[][];
  headerRow?: boolean;
}

export interface BlockLink {
  text: string;
  href: string;
}

export type ContentBlock = HeadingBlock | TextBlock;

/** The structured main content of one HTML page: the intermediate form every output mode is rendered from. */
export interface ExtractedDocument {
  title: string | null;
  byline: string | null;
  siteName: string | null;
  lang: string | null;
  /** ISO 8601 when the page states a parseable publication date. */
  publishedAt: string | null;
  description: string | null;
  /** Absolute URL from <link rel="canonical">, resolved against the page URL. */
  canonicalUrl: string | null;
  blocks: ContentBlock[];
  /** Blocks' text joined by blank lines. */
  text: string;
  wordCount: number;
}
