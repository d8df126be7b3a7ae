import { useState } from 'preact/hooks';
import { AlgohostError } from '@algohost/client';
import { callSnippets, SNIPPET_LANGUAGES, type SnippetLanguage } from '../../call-snippets.js';
import { KEY_PLACEHOLDER } from '../../git-help.js';
import { CopyBlock, Show, useLoad } from '../../ui.js';
import type { TabProps } from '../algorithm.js';

/** Label, summary, tagline, the README, sample input and output, and how to call it. */
export function OverviewTab({ session, algorithm: a, manager }: TabProps) {
  const readme = useLoad(async () => {
    try {
      // markdown-it is most of the app's weight: loaded only when a README is shown.
      const [r, { renderMarkdown }] = await Promise.all([session.client.algorithmReadme(a.owner, a.name), import('../../markdown.js')]);
      return { ...r, html: renderMarkdown(r.content) };
    } catch (err) {
      // No README in the repository (or a source the caller may not read): nothing to show.
      if (err instanceof AlgohostError && (err.status === 404 || err.status === 403)) return null;
      throw err;
    }
  }, [a.id]);
  const v = a.version_info;
  const version = v?.semantic_version ?? (manager ? 'latestPrivate' : 'latest');
  return (
    <>
      <section aria-labelledby="about">
        <h2 id="about">About</h2>
        <dl class="kv">
          <dt>Label</dt>
          <dd>{a.details.label || a.name}</dd>
          <dt>Summary</dt>
          <dd>{a.details.summary || <span class="muted">none</span>}</dd>
          <dt>Tagline</dt>
          <dd>{a.details.tagline || <span class="muted">none</span>}</dd>
          <dt>Latest version</dt>
          <dd>{v?.semantic_version ?? <span class="muted">not published yet</span>}</dd>
          <dt>License</dt>
          <dd>{a.settings.license}</dd>
        </dl>
      </section>
      {(v?.sample_input || v?.sample_output) && (
        <section aria-labelledby="sample">
          <h2 id="sample">Sample input and output</h2>
          {v.sample_input && (
            <>
              <h3>Input</h3>
              <pre tabIndex={0}>{v.sample_input}</pre>
            </>
          )}
          {v.sample_output && (
            <>
              <h3>Output</h3>
              <pre tabIndex={0}>{v.sample_output}</pre>
            </>
          )}
        </section>
      )}
      <HowToCall
        server={session.client.server}
        algorithm={`${a.owner}/${a.name}/${version}`}
        sample={v?.sample_input}
        pipelines={a.settings.pipeline_enabled}
      />
      <section aria-labelledby="readme">
        <h2 id="readme">README</h2>
        <Show loaded={readme} label="the README">
          {(r) =>
            r ? (
              <>
                {/* markdown.ts renders with HTML disabled: the output holds no tag from the source. */}
                <div class="markdown" dangerouslySetInnerHTML={{ __html: r.html }} />
                <p class="hint">
                  {r.path} at <code>{r.commit.slice(0, 8)}</code>
                  {r.truncated ? ' (cut short: it is long)' : ''}
                </p>
              </>
            ) : (
              <p class="muted">The repository has no README.</p>
            )
          }
        </Show>
      </section>
    </>
  );
}

function HowToCall({ server, algorithm, sample, pipelines }: { server: string; algorithm: string; sample?: string; pipelines: boolean }) {
  const [lang, setLang] = useState<SnippetLanguage>('curl');
  const snippets = callSnippets(server, algorithm, sample);
  return (
    <section aria-labelledby="call">
      <h2 id="call">How to call it</h2>
      <div class="segmented" role="group" aria-label="Show the example in">
        {SNIPPET_LANGUAGES.map((l) => (
          <button key={l} type="button" aria-pressed={lang === l} onClick={() => setLang(l)}>
            {l}
          </button>
        ))}
      </div>
      <CopyBlock text={snippets[lang]} label={`${lang} example`} copyLabel="Copy the example" />
      <p class="hint">
        Replace <code>{KEY_PLACEHOLDER}</code> with an API key holding <code>call_algorithms</code>
        {pipelines ? (
          <>
            . This algorithm can read and write your hosted data while it runs when the key holds <code>read_data</code> and{' '}
            <code>write_data</code>: a key without them withholds your data.
          </>
        ) : (
          '.'
        )}
      </p>
    </section>
  );
}
