/** URL path words ("/library/os.path.html" -> "library os path"), the page's own address as evidence. */
export function pathWords(url: string): string {
  try {
    const { pathname } = new URL(url);
    return decodeURIComponent(pathname)
      .replace(/\.(?:s?html?|php|aspx?|jsp)$/i, '')
      .replace(/(?:^|\/)index$/i, '')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  } catch {
    return '';
  }
}
