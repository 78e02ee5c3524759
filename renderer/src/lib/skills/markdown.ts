// SKILL.md body → safe HTML. marked renders, DOMPurify sanitizes (HTML profile only), and nothing
// remote survives: images that are not data: URIs become a labelled placeholder, styles and
// media are dropped, links keep their address but never navigate (MarkdownView intercepts clicks).
// Top-level headings carry data-line (1-based line in the SKILL.md file) so the outline can find them.
import DOMPurify from 'dompurify';
import { Marked, type Token, type Tokens } from 'marked';

const FORBID_TAGS = [
  'style',
  'link',
  'meta',
  'base',
  'iframe',
  'frame',
  'object',
  'embed',
  'video',
  'audio',
  'source',
  'picture',
  'track',
  'form',
  'input',
  'button',
  'select',
  'textarea',
];
const FORBID_ATTR = ['style', 'srcset', 'background', 'poster', 'ping', 'action', 'formaction', 'id', 'name'];

let purifier: ReturnType<typeof DOMPurify> | null = null;
function purify(): ReturnType<typeof DOMPurify> {
  purifier ??= DOMPurify(window);
  return purifier;
}

export function renderSkillBody(body: string, bodyStartLine: number): string {
  const lines = new WeakMap<Token, number>();
  const marked = new Marked({ gfm: true, async: false });
  marked.use({
    renderer: {
      heading(this: { parser: { parseInline(tokens: Token[]): string } }, token: Tokens.Heading): string {
        const line = lines.get(token);
        const attr = line === undefined ? '' : ` data-line="${line}"`;
        return `<h${token.depth}${attr}>${this.parser.parseInline(token.tokens)}</h${token.depth}>\n`;
      },
    },
  });

  const tokens = marked.lexer(body);
  let line = bodyStartLine;
  for (const token of tokens) {
    if (token.type === 'heading') lines.set(token, line);
    line += countNewlines(token.raw);
  }
  const html = marked.parser(tokens);

  const fragment = purify().sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS,
    FORBID_ATTR,
    RETURN_DOM_FRAGMENT: true,
  });
  neutralizeImages(fragment);
  markLinks(fragment);
  const holder = document.createElement('div');
  holder.append(fragment);
  return holder.innerHTML;
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function neutralizeImages(root: DocumentFragment): void {
  for (const img of Array.from(root.querySelectorAll('img'))) {
    const src = img.getAttribute('src') ?? '';
    if (/^data:image\/(png|gif|jpe?g|webp);/i.test(src)) continue;
    const placeholder = document.createElement('span');
    placeholder.className = 'md-image-blocked';
    placeholder.title = src ? `Image not loaded (no remote content): ${src}` : 'Image without a source';
    placeholder.textContent = `image: ${img.getAttribute('alt') || src || 'untitled'}`;
    img.replaceWith(placeholder);
  }
}

function markLinks(root: DocumentFragment): void {
  for (const a of Array.from(root.querySelectorAll('a[href]'))) {
    const href = a.getAttribute('href') ?? '';
    a.setAttribute('title', href);
    a.setAttribute('rel', 'noopener noreferrer');
    a.classList.add('md-link');
  }
}
