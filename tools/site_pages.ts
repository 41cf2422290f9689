/**
 * What every page of the site shares: the links to the index and to the previous and next page
 * in story order (at the top and at the bottom), the style those links and the notebook pages
 * need, and the list of notebook pages that tools/render_notebooks.ts leaves for
 * tools/build_site.ts, which adds the live pages to the same order.
 */

/** A page in story order: its file in the site folder and its title as plain text. */
export interface SitePage {
  file: string;
  title: string;
}

/** Where render_notebooks.ts lists the notebook pages it wrote, in story order. */
export const NOTEBOOK_PAGES = "data/notebooks.json";

export const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * The style of the links and of the notebook pages. nbconvert's lab style right-aligns every
 * <td> and <tr> of an output and sets `white-space: normal` on them, so a diff's code loses its
 * alignment and its indentation; here a cell follows its table, as HTML has it, and a table that
 * wants a column right-aligned says so on the cell. Wide figures shrink to the page.
 */
export const SITE_STYLE = `<style>
body.gemm-page { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em; }
.gemm-nav { display: flex; gap: 1em; justify-content: space-between; align-items: baseline;
  font-family: sans-serif; font-size: 14px; max-width: 70em; margin: .5em auto; padding: .4em 1em;
  border-block: 1px solid #ddd; }
.gemm-nav a { text-decoration: none; }
.gemm-nav .prev, .gemm-nav .next { flex: 1; }
.gemm-nav .next { text-align: right; }
.gemm-source { font-family: sans-serif; font-size: 14px; max-width: 70em; margin: .5em auto;
  padding: .4em 1em; background: #f6f8fa; }
.gemm-source.software { background: #fff4e5; border-left: 4px solid #e8a33d; }
.jp-Notebook .jp-RenderedHTMLCommon :is(tr, td, th) { text-align: inherit; white-space: inherit; }
.jp-Notebook .jp-OutputArea-output img { max-width: 100%; height: auto; }
.gemm-index { list-style: none; padding: 0; }
.gemm-index li { margin: .8em 0; }
.gemm-index .idea { margin: .2em 0 0 0; color: #444; }
</style>
`;

/** A page of the site's own (the index, the ladder, a step without a notebook). */
export function standalonePage(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<link rel="icon" href="data:,">\n<title>${escapeHtml(title)}</title>\n${SITE_STYLE}</head>\n` +
    `<body class="gemm-page">\n${body}</body></html>\n`;
}

const NAV_START = "<!-- gemm-nav -->";
const NAV_END = "<!-- /gemm-nav -->";

function navBar(pages: SitePage[], at: number): string {
  const link = (rel: "prev" | "next", page: SitePage | undefined) =>
    page
      ? `<a class="${rel}" rel="${rel}" href="${page.file}">` +
        (rel === "prev" ? `← ${escapeHtml(page.title)}` : `${escapeHtml(page.title)} →`) + `</a>`
      : `<span class="${rel}"></span>`;
  return `${NAV_START}<nav class="gemm-nav">${link("prev", pages[at - 1])}` +
    `<a class="index" href="index.html">index</a>${link("next", pages[at + 1])}</nav>${NAV_END}\n`;
}

/**
 * The page `pages[at]` with its links at the top and the bottom; links an earlier build put
 * there are replaced, so a later step can add pages to the order.
 */
export function withNav(html: string, pages: SitePage[], at: number): string {
  let text = html;
  for (let start = text.indexOf(NAV_START); start >= 0; start = text.indexOf(NAV_START)) {
    const end = text.indexOf(NAV_END, start);
    if (end < 0) throw new Error(`${pages[at].file}: a navigation bar without its end`);
    text = text.slice(0, start) + text.slice(end + NAV_END.length).replace(/^\n/, "");
  }
  const body = /<body[^>]*>\n?/.exec(text);
  const close = text.lastIndexOf("</body>");
  if (!body || close < 0) throw new Error(`${pages[at].file}: no <body> to put the links in`);
  const bar = navBar(pages, at);
  const top = body.index + body[0].length;
  return text.slice(0, top) + bar + text.slice(top, close) + bar + text.slice(close);
}
