import { useEffect, useState } from 'preact/hooks';
import { AlgorithmError, decodeBase64, type CallResponse } from '@algohost/client';
import { Checkbox, Form, type Options, RadioGroup, SelectField, SubmitActions, TextAreaField, useFields } from '../../forms.js';
import { Field, formatBytes, useAction, useLoad } from '../../ui.js';
import type { TabProps } from '../algorithm.js';

type InputKind = 'text' | 'json' | 'binary';

interface Outcome {
  response?: CallResponse;
  failure?: { message: string; errorType: string; stacktrace?: string; metadata?: Record<string, unknown> };
}

/** A console: an input (text, JSON or a file), a version, a timeout; the whole answer shown. */
export function RunTab({ session, algorithm: a, manager }: TabProps) {
  const versions = useVersionChoice(session, a, manager);
  const input = useFields<RunInput>({ kind: 'text', text: '', file: null, timeout: '300', stdout: false });
  const [inputError, setInputError] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const run = useAction(async () => {
    setOutcome(null);
    const body = await inputOf(input.values);
    if ('problem' in body) return setInputError(body.problem);
    setInputError(null);
    setOutcome(await call(session, a, versions.version, body.input, input.values, manager));
  });

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
        <Form onSubmit={() => void run.run()}>
          <SelectField
            label="Version"
            hint={versions.error ? `Could not list versions: ${versions.error}` : undefined}
            value={versions.version}
            onValue={versions.setVersion}
            options={versions.options}
          />
          <InputFields input={input} inputError={inputError} onKind={() => setInputError(null)} manager={manager} />
          <SubmitActions action={run} disabled={!versions.version}>
            Run
          </SubmitActions>
        </Form>
      </section>
      <section aria-labelledby="result" aria-live="polite">
        <h2 id="result">Result</h2>
        {run.busy && <p aria-busy="true">Running…</p>}
        {!run.busy && !outcome && <p class="muted">Run the algorithm to see its answer here.</p>}
        {outcome?.response && <ResultView response={outcome.response} />}
        {outcome?.failure && <FailureView failure={outcome.failure} />}
      </section>
    </div>
  );
}

interface RunInput {
  kind: InputKind;
  text: string;
  file: File | null;
  timeout: string;
  stdout: boolean;
}

/** The versions offered (published ones, then latest, and for a manager latestPrivate and unpublished builds); the newest published first. */
function useVersionChoice(session: TabProps['session'], a: TabProps['algorithm'], manager: boolean) {
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
  useEffect(() => {
    const v = versions.data;
    if (v && !version) setVersion(v.published[0] ?? v.builds[0] ?? (manager ? 'latestPrivate' : 'latest'));
  }, [versions.data]);
  const options: Options = versions.data
    ? [
        ...versions.data.published.map((v) => [v, v] as const),
        ['latest', 'latest (newest public)'],
        ...(manager
          ? [
              ['latestPrivate', 'latestPrivate (newest, private too)'] as const,
              ...versions.data.builds.map((sha) => [sha, `build ${sha.slice(0, 8)} (not published)`] as const),
            ]
          : []),
      ]
    : [];
  return { version, setVersion, options, error: versions.error };
}

const INPUT_KINDS: [InputKind, string][] = [
  ['text', 'Text (text/plain)'],
  ['json', 'JSON (application/json)'],
  ['binary', 'A file (application/octet-stream)'],
];

function InputFields({
  input,
  inputError,
  onKind,
  manager,
}: {
  input: { values: RunInput; set: <K extends keyof RunInput>(key: K) => (value: RunInput[K]) => void };
  inputError: string | null;
  onKind: () => void;
  manager: boolean;
}) {
  const { values: v, set } = input;
  return (
    <>
      <RadioGroup legend="Input type" name="input_kind" value={v.kind} onValue={(k) => (set('kind')(k), onKind())} options={INPUT_KINDS} />
      {v.kind === 'binary' ? (
        <Field label="File" error={inputError}>
          {(p) => <input {...p} type="file" onChange={(e) => set('file')(e.currentTarget.files?.[0] ?? null)} />}
        </Field>
      ) : (
        <TextAreaField
          label="Input"
          error={inputError}
          hint={v.kind === 'json' ? 'Any JSON value: "text", 42, [1, 2], {"a": 1}.' : undefined}
          class="mono"
          value={v.text}
          onValue={set('text')}
        />
      )}
      <Field label="Timeout (seconds)" hint="At most 3000.">
        {(p) => <input {...p} type="number" min={1} max={3000} value={v.timeout} onInput={(e) => set('timeout')(e.currentTarget.value)} />}
      </Field>
      {manager && (
        <Checkbox checked={v.stdout} onValue={set('stdout')}>
          Show what the algorithm printed (stdout)
        </Checkbox>
      )}
    </>
  );
}

/** The call's input as the chosen kind says, or why it cannot be sent. */
async function inputOf(v: RunInput): Promise<{ input: unknown } | { problem: string }> {
  if (v.kind === 'json') {
    try {
      return { input: JSON.parse(v.text) };
    } catch (err) {
      return { problem: `This is not JSON: ${(err as Error).message}` };
    }
  }
  if (v.kind === 'binary') return v.file ? { input: new Uint8Array(await v.file.arrayBuffer()) } : { problem: 'Choose a file to send.' };
  return { input: v.text };
}

async function call(
  session: TabProps['session'],
  a: TabProps['algorithm'],
  version: string,
  input: unknown,
  v: RunInput,
  manager: boolean,
): Promise<Outcome> {
  try {
    const response = await session.client.call(`${a.owner}/${a.name}/${version}`, input, {
      inputType: v.kind,
      timeout: Number(v.timeout) || undefined,
      stdout: manager && v.stdout,
    });
    return { response };
  } catch (err) {
    // The algorithm raised: HTTP 200 with an error envelope, shown as a result, not a failure.
    if (err instanceof AlgorithmError)
      return { failure: { message: err.message, errorType: err.errorType, stacktrace: err.stacktrace, metadata: err.metadata } };
    throw err;
  }
}

function FailureView({ failure }: { failure: NonNullable<Outcome['failure']> }) {
  return (
    <div data-testid="algorithm-error">
      <p class="error">
        {failure.errorType}: {failure.message}
      </p>
      {failure.stacktrace && (
        <>
          <h3>Stack trace</h3>
          <pre tabIndex={0}>{failure.stacktrace}</pre>
        </>
      )}
      {failure.metadata && <Metadata metadata={failure.metadata} />}
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
