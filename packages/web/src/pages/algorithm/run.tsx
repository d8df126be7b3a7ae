import { useEffect, useState } from 'preact/hooks';
import { AlgorithmError, decodeBase64, type CallResponse } from '@algohost/client';
import { Busy, ErrorText, Field, formatBytes, useAction, useLoad } from '../../ui.js';
import type { TabProps } from '../algorithm.js';

type InputKind = 'text' | 'json' | 'binary';

interface Outcome {
  response?: CallResponse;
  failure?: { message: string; errorType: string; stacktrace?: string; metadata?: Record<string, unknown> };
}

/** A console: an input (text, JSON or a file), a version, a timeout; the whole answer shown. */
export function RunTab({ session, algorithm: a, manager }: TabProps) {
  const c = session.client;
  const versions = useLoad(async () => {
    const published = (await c.versions.list(a.owner, a.name, { limit: 50 })).results
      .map((v) => v.version_info.semantic_version!)
      .filter(Boolean);
    const builds = manager
      ? (await c.versions.list(a.owner, a.name, { published: false, limit: 20 })).results.map((v) => v.version_info.git_hash)
      : [];
    return { published, builds };
  }, [a.id]);
  const [version, setVersion] = useState('');
  const [kind, setKind] = useState<InputKind>('text');
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [timeout, setTimeoutSeconds] = useState('300');
  const [stdout, setStdout] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [inputError, setInputError] = useState<string | null>(null);

  useEffect(() => {
    const v = versions.data;
    if (v && !version) setVersion(v.published[0] ?? v.builds[0] ?? (manager ? 'latestPrivate' : 'latest'));
  }, [versions.data]);

  const run = useAction(async () => {
    setOutcome(null);
    let input: unknown;
    if (kind === 'json') {
      try {
        input = JSON.parse(text);
      } catch (err) {
        setInputError(`This is not JSON: ${(err as Error).message}`);
        return;
      }
    } else if (kind === 'binary') {
      if (!file) {
        setInputError('Choose a file to send.');
        return;
      }
      input = new Uint8Array(await file.arrayBuffer());
    } else input = text;
    setInputError(null);
    try {
      const response = await c.call(`${a.owner}/${a.name}/${version}`, input, {
        inputType: kind,
        timeout: Number(timeout) || undefined,
        stdout: manager && stdout,
      });
      setOutcome({ response });
    } catch (err) {
      // The algorithm raised: HTTP 200 with an error envelope, shown as a result, not a failure.
      if (err instanceof AlgorithmError)
        setOutcome({ failure: { message: err.message, errorType: err.errorType, stacktrace: err.stacktrace, metadata: err.metadata } });
      else throw err;
    }
  });

  const options = versions.data
    ? [
        ...versions.data.published.map((v) => [v, v]),
        ['latest', 'latest (newest public)'],
        ...(manager
          ? [
              ['latestPrivate', 'latestPrivate (newest, private too)'],
              ...versions.data.builds.map((sha) => [sha, `build ${sha.slice(0, 8)} (not published)`]),
            ]
          : []),
      ]
    : [];

  return (
    <div class="grid-2">
      <section aria-labelledby="run">
        <h2 id="run">Run</h2>
        {a.settings.pipeline_enabled && (
          // The call key acts for the caller (docs/api-guide.md, "Credentials and capabilities"): say what
          // that hands over before anyone runs someone else's algorithm.
          <p class="hint">
            This algorithm calls other algorithms and uses hosted data as you: while a call runs, it can read and write all of your hosted
            data. Runs from this page use your session, which holds everything. To withhold your data, call it with an API key holding only{' '}
            <code>call_algorithms</code> (without <code>read_data</code> and <code>write_data</code>); its call then gets neither.
          </p>
        )}
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run.run();
          }}
        >
          <Field label="Version" hint={versions.error ? `Could not list versions: ${versions.error}` : undefined}>
            {(p) => (
              <select {...p} value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
                {options.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <fieldset>
            <legend>Input type</legend>
            {(
              [
                ['text', 'Text (text/plain)'],
                ['json', 'JSON (application/json)'],
                ['binary', 'A file (application/octet-stream)'],
              ] as [InputKind, string][]
            ).map(([k, l]) => (
              <label class="check" key={k}>
                <input type="radio" name="input_kind" value={k} checked={kind === k} onChange={() => (setKind(k), setInputError(null))} />
                {l}
              </label>
            ))}
          </fieldset>
          {kind === 'binary' ? (
            <Field label="File" error={inputError}>
              {(p) => <input {...p} type="file" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />}
            </Field>
          ) : (
            <Field label="Input" error={inputError} hint={kind === 'json' ? 'Any JSON value: "text", 42, [1, 2], {"a": 1}.' : undefined}>
              {(p) => <textarea {...p} class="mono" value={text} onInput={(e) => setText(e.currentTarget.value)} />}
            </Field>
          )}
          <Field label="Timeout (seconds)" hint="At most 3000.">
            {(p) => (
              <input {...p} type="number" min={1} max={3000} value={timeout} onInput={(e) => setTimeoutSeconds(e.currentTarget.value)} />
            )}
          </Field>
          {manager && (
            <label class="check">
              <input type="checkbox" checked={stdout} onChange={(e) => setStdout(e.currentTarget.checked)} />
              Show what the algorithm printed (stdout)
            </label>
          )}
          <ErrorText error={run.error} />
          <div class="actions">
            <Busy type="submit" busy={run.busy} disabled={!version}>
              Run
            </Busy>
          </div>
        </form>
      </section>
      <section aria-labelledby="result" aria-live="polite">
        <h2 id="result">Result</h2>
        {run.busy && <p aria-busy="true">Running…</p>}
        {!run.busy && !outcome && <p class="muted">Run the algorithm to see its answer here.</p>}
        {outcome?.response && <ResultView response={outcome.response} />}
        {outcome?.failure && (
          <div data-testid="algorithm-error">
            <p class="error">
              {outcome.failure.errorType}: {outcome.failure.message}
            </p>
            {outcome.failure.stacktrace && (
              <>
                <h3>Stack trace</h3>
                <pre tabIndex={0}>{outcome.failure.stacktrace}</pre>
              </>
            )}
            {outcome.failure.metadata && <Metadata metadata={outcome.failure.metadata} />}
          </div>
        )}
      </section>
    </div>
  );
}

function Metadata({ metadata: m }: { metadata: Record<string, unknown> }) {
  const duration = typeof m.duration === 'number' ? `${(m.duration * 1000).toFixed(1)} ms` : '—';
  return (
    <dl class="kv">
      <dt>Content type</dt>
      <dd>{String(m.content_type ?? '—')}</dd>
      <dt>Duration</dt>
      <dd>{duration}</dd>
      <dt>Start</dt>
      <dd>{m.cold_start === true ? 'cold (a new runner started)' : m.cold_start === false ? 'warm' : '—'}</dd>
      <dt>Request id</dt>
      <dd>
        <code>{String(m.request_id ?? '—')}</code>
      </dd>
    </dl>
  );
}

function ResultView({ response }: { response: CallResponse }) {
  const m = response.metadata;
  const [download, setDownload] = useState<string | null>(null);
  let body: string;
  let size: number | null = null;
  if (m.content_type === 'binary' && typeof response.result === 'string') {
    const bytes = decodeBase64(response.result);
    size = bytes.byteLength;
    body = `${formatBytes(size)} of binary data`;
  } else if (m.content_type === 'text' && typeof response.result === 'string') body = response.result;
  else body = JSON.stringify(response.result, null, 2);
  useEffect(() => {
    if (m.content_type !== 'binary' || typeof response.result !== 'string') return;
    const url = URL.createObjectURL(new Blob([decodeBase64(response.result) as BlobPart]));
    setDownload(url);
    return () => URL.revokeObjectURL(url);
  }, [response]);
  return (
    <div data-testid="call-result">
      <pre tabIndex={0} aria-label="Result">
        {body}
      </pre>
      {download && size !== null && (
        <a href={download} download="result.bin">
          Download the result
        </a>
      )}
      <Metadata metadata={{ ...m, request_id: m.request_id ?? response.request_id }} />
      {typeof m.stdout === 'string' && (
        <>
          <h3>Stdout</h3>
          <pre tabIndex={0}>{m.stdout || '(nothing printed)'}</pre>
        </>
      )}
    </div>
  );
}
