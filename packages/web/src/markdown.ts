/**
 * README rendering. markdown-it with `html: false` escapes every tag in the source, so the
 * output holds only the elements markdown-it itself makes; its link check refuses
 * javascript:, vbscript:, file: and data: (but images) URLs. Links open without an opener or
 * referrer. Rendering happens here only, so nothing else in the app sets HTML.
 */
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(source: string): string {
  return md.render(source);
}
