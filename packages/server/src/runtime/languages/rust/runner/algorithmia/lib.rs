//! `algorithmia`: the in-algorithm client for Rust algorithms on algohost. The build links it
//! into every algorithm crate, so `use algorithmia::...` needs no line in Cargo.toml:
//!
//! ```ignore
//! let client = algorithmia::client();
//! let greeting = client.algo("owner/name/version").pipe("world")?;          // text in
//! let answer = client.algo("owner/other/1.0.0").pipe(algorithmia::Json(&value))?; // JSON in
//! let value: serde_json::Value = answer.parse()?;                            // any FromStr
//! client.file("data://.my/collection/notes.txt").put("text")?;
//! let text = client.file("data://.my/collection/notes.txt").get_string()?;
//! ```
//!
//! Address: `$ALGORITHMIA_API`; when `$ALGOHOST_API_SOCKET` names a Unix socket every request goes
//! over it. Key: the one given to [`Algorithmia::with_key`], else `$ALGORITHMIA_API_KEY` read at
//! each request: the runner sets it only while a call runs (algorithms with pipeline_enabled), so
//! a client kept in a static works too. Only the standard library: results in JSON come as JSON
//! text, which [`AlgoResponse::parse`] turns into any `FromStr` type such as `serde_json::Value`.

mod http;
mod json;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use json::J;

const KEY_MISSING: &str = "no API key: calling other algorithms and hosted data from an algorithm needs pipeline_enabled \
                           in the algorithm's settings (ALGORITHMIA_API_KEY is not set)";
/// Calls may run 300 s by default; the read timeout leaves the service time to answer.
const TIMEOUT: Duration = Duration::from_secs(360);

/// What went wrong: the service's or the algorithm's message, and the callee's error type.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    /// The error type the algorithm called reported (AlgorithmError, InputError…).
    pub error_type: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The algorithm has no API key: it needs pipeline_enabled.
    NoApiKey,
    /// The service refused or failed the request (not found, limits, bad request…).
    Api,
    /// The algorithm called failed.
    Algorithm,
    /// The service could not be reached, or answered something unreadable.
    Io,
}

impl Error {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), error_type: None }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// A client with the address and the call's key from the environment.
pub fn client() -> Algorithmia {
    Algorithmia { api_key: None }
}

/// The client: [`algo`](Algorithmia::algo), [`file`](Algorithmia::file), [`dir`](Algorithmia::dir).
#[derive(Clone, Debug, Default)]
pub struct Algorithmia {
    api_key: Option<String>,
}

impl Algorithmia {
    /// The same as [`client()`].
    pub fn client() -> Self {
        client()
    }

    /// A client with its own key instead of the call's.
    pub fn with_key(api_key: &str) -> Self {
        Algorithmia { api_key: Some(api_key.to_string()) }
    }

    /// An algorithm as `owner/name[/version]` (an `algo://` prefix is allowed).
    pub fn algo(&self, reference: &str) -> Algorithm {
        let r = reference.strip_prefix("algo://").unwrap_or(reference).trim_matches('/');
        Algorithm { client: self.clone(), path: format!("/v1/algo/{}", encode_path(r)) }
    }

    /// A hosted file, `data://owner/collection/path` (`.my` = the caller).
    pub fn file(&self, uri: &str) -> DataFile {
        DataFile { client: self.clone(), path: data_path(uri), size: None, last_modified: None }
    }

    /// A hosted directory or collection, `data://owner/collection[/path]`.
    pub fn dir(&self, uri: &str) -> DataDir {
        DataDir { client: self.clone(), path: data_path(uri) }
    }

    /// Insights: reports metrics from a call of a version with insights_enabled, as
    /// `POST /v1/insights` without an Authorization header; each value is JSON text (a
    /// `serde_json::Value` displays as such: `("count", json!(3))`). Returns how many were
    /// accepted. Elsewhere (no `$ALGOHOST_INSIGHTS_TOKEN`: the runner sets it only while such a
    /// call runs) it does nothing and returns 0, so the same code runs whether or not the
    /// version has Insights on.
    pub fn report_insights<V: fmt::Display>(&self, insights: &[(&str, V)]) -> Result<usize> {
        let Some(token) = std::env::var("ALGOHOST_INSIGHTS_TOKEN").ok().filter(|t| !t.is_empty()) else {
            return Ok(0);
        };
        let mut report = Vec::new();
        for (key, value) in insights {
            let text = value.to_string();
            let parsed = json::parse(&text)
                .map_err(|e| Error::new(ErrorKind::Api, format!("the value of insight {key:?} is not JSON text: {e}")))?;
            report.push(J::Obj(vec![("insight_key".into(), J::Str((*key).to_string())), ("insight_value".into(), parsed)]));
        }
        let body = J::Arr(report).to_text();
        let headers = vec![("X-Algohost-Insights-Token", token)];
        let res = self.send("POST", "/v1/insights", headers, Some("application/json"), None, Some(body.as_bytes()))?;
        if res.status >= 300 {
            return Err(api_error(&res));
        }
        let answer = json::parse(&String::from_utf8_lossy(&res.body)).map_err(|e| Error::new(ErrorKind::Io, e))?;
        Ok(answer.get("accepted").and_then(J::as_f64).unwrap_or(0.0) as usize)
    }

    fn request(&self, method: &str, path: &str, content_type: Option<&str>, accept: Option<&str>, body: Option<&[u8]>) -> Result<http::Response> {
        let key = match &self.api_key {
            Some(k) => k.clone(),
            None => std::env::var("ALGORITHMIA_API_KEY").ok().filter(|k| !k.is_empty()).ok_or_else(|| {
                let mut e = Error::new(ErrorKind::NoApiKey, KEY_MISSING);
                e.error_type = Some("AlgorithmError".into());
                e
            })?,
        };
        self.send(method, path, vec![("Authorization", format!("Simple {key}"))], content_type, accept, body)
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        mut headers: Vec<(&str, String)>,
        content_type: Option<&str>,
        accept: Option<&str>,
        body: Option<&[u8]>,
    ) -> Result<http::Response> {
        let socket = std::env::var("ALGOHOST_API_SOCKET").ok().filter(|s| !s.is_empty());
        let address = std::env::var("ALGORITHMIA_API").ok().filter(|s| !s.is_empty());
        let base = address.clone().unwrap_or_else(|| "http://localhost".into());
        let Some(rest) = base.strip_prefix("http://") else {
            return Err(Error::new(ErrorKind::Io, format!("the in-algorithm client speaks plain http:// only, not {base}")));
        };
        let (authority, prefix) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        let target = format!("{}{}", if prefix.is_empty() { String::new() } else { format!("/{}", prefix.trim_end_matches('/')) }, path);
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().unwrap_or(80)),
            None => (authority, 80),
        };
        let endpoint = match &socket {
            Some(s) => http::Endpoint::Unix(s),
            None if address.is_some() => http::Endpoint::Tcp(host, port),
            None => return Err(Error::new(ErrorKind::Io, "no API address: ALGORITHMIA_API is not set")),
        };
        if let Some(t) = content_type {
            headers.push(("Content-Type", t.to_string()));
        }
        if let Some(a) = accept {
            headers.push(("Accept", a.to_string()));
        }
        http::exchange(&endpoint, method, &target, &headers, body, TIMEOUT)
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot reach the algohost API: {e}")))
    }
}

/// The service's reason for a failed response: X-Error-Message, else the JSON error's message.
fn error_message(res: &http::Response) -> String {
    if let Some(h) = res.header("x-error-message").filter(|h| !h.is_empty()) {
        return h.to_string();
    }
    let text = String::from_utf8_lossy(&res.body);
    if let Ok(parsed) = json::parse(&text) {
        match parsed.get("error") {
            Some(e @ J::Obj(_)) => {
                if let Some(m) = e.get("message").and_then(J::as_str) {
                    return m.to_string();
                }
            }
            Some(J::Str(s)) => return s.clone(),
            _ => {}
        }
    }
    let short: String = text.chars().take(500).collect();
    if short.is_empty() {
        format!("HTTP {}", res.status)
    } else {
        format!("HTTP {}: {short}", res.status)
    }
}

fn api_error(res: &http::Response) -> Error {
    Error::new(ErrorKind::Api, error_message(res))
}

/// Path segments percent-encoded (all but unreserved characters), slashes kept.
fn encode_path(path: &str) -> String {
    let mut out = String::new();
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        for b in segment.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// `data://owner/collection/x` (or `owner/collection/x`) → `owner/collection/x`.
fn data_path(uri: &str) -> String {
    uri.strip_prefix("data://").unwrap_or(uri).trim_matches('/').to_string()
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let clean: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=').collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        match chunk.len() {
            4 => out.extend_from_slice(&bytes),
            3 => out.extend_from_slice(&bytes[..2]),
            2 => out.push(bytes[0]),
            _ => return None,
        }
    }
    Some(out)
}

/// What a call sends: text, bytes, or JSON text.
#[derive(Clone, Debug, PartialEq)]
pub enum AlgoInput {
    Text(String),
    Binary(Vec<u8>),
    /// JSON text, sent as it is.
    Json(String),
}

impl From<&str> for AlgoInput {
    fn from(s: &str) -> Self {
        AlgoInput::Text(s.to_string())
    }
}

impl From<String> for AlgoInput {
    fn from(s: String) -> Self {
        AlgoInput::Text(s)
    }
}

impl From<&String> for AlgoInput {
    fn from(s: &String) -> Self {
        AlgoInput::Text(s.clone())
    }
}

impl From<Vec<u8>> for AlgoInput {
    fn from(b: Vec<u8>) -> Self {
        AlgoInput::Binary(b)
    }
}

impl From<&[u8]> for AlgoInput {
    fn from(b: &[u8]) -> Self {
        AlgoInput::Binary(b.to_vec())
    }
}

/// JSON input from anything that displays as JSON, such as `serde_json::Value`:
/// `pipe(algorithmia::Json(&value))`.
pub struct Json<T>(pub T);

impl<T: fmt::Display> From<Json<T>> for AlgoInput {
    fn from(j: Json<T>) -> Self {
        AlgoInput::Json(j.0.to_string())
    }
}

/// One algorithm; [`pipe`](Algorithm::pipe) calls it (POST /v1/algo/...).
#[derive(Clone, Debug)]
pub struct Algorithm {
    client: Algorithmia,
    path: String,
}

/// What a call answered.
#[derive(Clone, Debug, PartialEq)]
pub enum AlgoOutput {
    Text(String),
    Binary(Vec<u8>),
    /// The result as JSON text.
    Json(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// text, json, binary or void.
    pub content_type: String,
    /// Seconds the call took.
    pub duration: f64,
    pub stdout: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AlgoResponse {
    pub result: AlgoOutput,
    pub metadata: Metadata,
}

impl AlgoResponse {
    /// A text result, or a JSON result that is a string.
    pub fn as_string(&self) -> Option<String> {
        match &self.result {
            AlgoOutput::Text(s) => Some(s.clone()),
            AlgoOutput::Json(j) => json::parse(j).ok().and_then(|v| v.as_str().map(str::to_string)),
            AlgoOutput::Binary(_) => None,
        }
    }

    /// A binary result.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.result {
            AlgoOutput::Binary(b) => Some(b),
            _ => None,
        }
    }

    /// The result as JSON text (a text result as a JSON string); None for a binary result.
    pub fn to_json(&self) -> Option<String> {
        match &self.result {
            AlgoOutput::Text(s) => {
                let mut out = String::new();
                json::write_str(&mut out, s);
                Some(out)
            }
            AlgoOutput::Json(j) => Some(j.clone()),
            AlgoOutput::Binary(_) => None,
        }
    }

    /// The result parsed from its JSON text: `let v: serde_json::Value = response.parse()?;`.
    pub fn parse<T: FromStr>(&self) -> Result<T>
    where
        T::Err: fmt::Display,
    {
        let text = self.to_json().ok_or_else(|| Error::new(ErrorKind::Io, "the result is binary, not JSON"))?;
        text.parse().map_err(|e: T::Err| Error::new(ErrorKind::Io, format!("cannot parse the result: {e}")))
    }
}

impl Algorithm {
    /// Calls the algorithm: `&str`/`String` as text, `Vec<u8>`/`&[u8]` as binary,
    /// [`Json`] as JSON. A failure of the algorithm is an [`Error`] of kind `Algorithm` with its
    /// message and error type.
    pub fn pipe<I: Into<AlgoInput>>(&self, input: I) -> Result<AlgoResponse> {
        let (content_type, body) = match input.into() {
            AlgoInput::Text(s) => ("text/plain; charset=utf-8", s.into_bytes()),
            AlgoInput::Binary(b) => ("application/octet-stream", b),
            AlgoInput::Json(j) => ("application/json", j.into_bytes()),
        };
        let res = self.client.request("POST", &self.path, Some(content_type), None, Some(&body))?;
        let text = String::from_utf8_lossy(&res.body);
        let envelope = json::parse(&text).map_err(|_| api_error(&res))?;
        if let Some(error) = envelope.get("error") {
            // HTTP 200 with an error is the algorithm's own failure; other statuses the service's.
            if res.status >= 300 {
                return Err(api_error(&res));
            }
            let message = error.get("message").and_then(J::as_str).map(str::to_string).unwrap_or_else(|| error_message(&res));
            let mut e = Error::new(ErrorKind::Algorithm, message);
            e.error_type = error.get("error_type").and_then(J::as_str).map(str::to_string);
            return Err(e);
        }
        if res.status >= 300 {
            return Err(api_error(&res));
        }
        let meta = envelope.get("metadata");
        let metadata = Metadata {
            content_type: meta.and_then(|m| m.get("content_type")).and_then(J::as_str).unwrap_or("json").to_string(),
            duration: meta.and_then(|m| m.get("duration")).and_then(J::as_f64).unwrap_or(0.0),
            stdout: meta.and_then(|m| m.get("stdout")).and_then(J::as_str).map(str::to_string),
        };
        let result = envelope.get("result").cloned().unwrap_or(J::Null);
        let result = match (metadata.content_type.as_str(), result) {
            ("text", J::Str(s)) => AlgoOutput::Text(s),
            ("binary", J::Str(s)) => AlgoOutput::Binary(
                base64_decode(&s).ok_or_else(|| Error::new(ErrorKind::Io, "the binary result is not valid base64"))?,
            ),
            (_, other) => AlgoOutput::Json(other.to_text()),
        };
        Ok(AlgoResponse { result, metadata })
    }

    /// Calls the algorithm with JSON text as it is.
    pub fn pipe_json(&self, json: &str) -> Result<AlgoResponse> {
        self.pipe(AlgoInput::Json(json.to_string()))
    }
}

fn url(path: &str) -> String {
    format!("/v1/data/{}", encode_path(path))
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// HEAD: true for 200, false for 404, an error otherwise.
fn exists_at(client: &Algorithmia, path: &str) -> Result<bool> {
    let res = client.request("HEAD", &url(path), None, None, None)?;
    match res.status {
        200 => Ok(true),
        404 => Ok(false),
        _ => Err(api_error(&res)),
    }
}

/// What [`DataFile::put`] stores: text (as UTF-8) or bytes.
pub enum FileContent {
    Text(String),
    Bytes(Vec<u8>),
}

impl From<&str> for FileContent {
    fn from(s: &str) -> Self {
        FileContent::Text(s.to_string())
    }
}

impl From<String> for FileContent {
    fn from(s: String) -> Self {
        FileContent::Text(s)
    }
}

impl From<Vec<u8>> for FileContent {
    fn from(b: Vec<u8>) -> Self {
        FileContent::Bytes(b)
    }
}

impl From<&[u8]> for FileContent {
    fn from(b: &[u8]) -> Self {
        FileContent::Bytes(b.to_vec())
    }
}

/// A hosted file (docs/compatibility.md §5, /v1/data/...).
#[derive(Clone, Debug)]
pub struct DataFile {
    client: Algorithmia,
    path: String,
    /// Size in bytes, as listed by [`DataDir::files`].
    pub size: Option<u64>,
    /// YYYY-MM-DDTHH:MM:SS.mmmZ, as listed by [`DataDir::files`].
    pub last_modified: Option<String>,
}

impl DataFile {
    pub fn name(&self) -> &str {
        name_of(&self.path)
    }

    /// `data://owner/collection/...`
    pub fn uri(&self) -> String {
        format!("data://{}", self.path)
    }

    pub fn exists(&self) -> Result<bool> {
        exists_at(&self.client, &self.path)
    }

    pub fn get_bytes(&self) -> Result<Vec<u8>> {
        let res = self.client.request("GET", &url(&self.path), None, Some("application/octet-stream"), None)?;
        if res.status != 200 {
            return Err(api_error(&res));
        }
        if res.header("x-data-type") == Some("directory") {
            return Err(Error::new(ErrorKind::Api, format!("{} is a directory, not a file", self.uri())));
        }
        Ok(res.body)
    }

    /// The content as UTF-8 text.
    pub fn get_string(&self) -> Result<String> {
        String::from_utf8(self.get_bytes()?).map_err(|_| Error::new(ErrorKind::Io, format!("{} is not UTF-8 text", self.uri())))
    }

    /// Stores text (UTF-8) or bytes, replacing the file if it exists.
    pub fn put<C: Into<FileContent>>(&self, content: C) -> Result<()> {
        let (content_type, body) = match content.into() {
            FileContent::Text(s) => ("text/plain; charset=utf-8", s.into_bytes()),
            FileContent::Bytes(b) => ("application/octet-stream", b),
        };
        let res = self.client.request("PUT", &url(&self.path), Some(content_type), None, Some(&body))?;
        if res.status >= 300 {
            return Err(api_error(&res));
        }
        Ok(())
    }

    pub fn delete(&self) -> Result<()> {
        let res = self.client.request("DELETE", &url(&self.path), None, None, None)?;
        if res.status >= 300 {
            return Err(api_error(&res));
        }
        Ok(())
    }
}

/// A hosted directory or collection (docs/compatibility.md §5, /v1/data/...).
#[derive(Clone, Debug)]
pub struct DataDir {
    client: Algorithmia,
    path: String,
}

impl DataDir {
    pub fn name(&self) -> &str {
        name_of(&self.path)
    }

    /// `data://owner/collection/...`
    pub fn uri(&self) -> String {
        format!("data://{}", self.path)
    }

    pub fn file(&self, name: &str) -> DataFile {
        self.client.file(&format!("{}/{name}", self.path))
    }

    pub fn dir(&self, name: &str) -> DataDir {
        self.client.dir(&format!("{}/{name}", self.path))
    }

    pub fn exists(&self) -> Result<bool> {
        exists_at(&self.client, &self.path)
    }

    /// Creates it in its parent (under `data://.my` a collection of the caller).
    pub fn create(&self) -> Result<()> {
        let Some((parent, name)) = self.path.rsplit_once('/') else {
            return Err(Error::new(ErrorKind::Api, format!("{} has no parent to create it in", self.uri())));
        };
        let mut body = String::from("{\"name\":");
        json::write_str(&mut body, name);
        body.push('}');
        let res = self.client.request("POST", &url(parent), Some("application/json"), None, Some(body.as_bytes()))?;
        if res.status != 200 {
            return Err(api_error(&res));
        }
        Ok(())
    }

    /// Deletes it; `force` deletes what it holds too.
    pub fn delete(&self, force: bool) -> Result<()> {
        let target = format!("{}{}", url(&self.path), if force { "?force=true" } else { "" });
        let res = self.client.request("DELETE", &target, None, None, None)?;
        if res.status >= 300 {
            return Err(api_error(&res));
        }
        Ok(())
    }

    /// Every page of the listing (folders and files may come on separate pages).
    fn pages(&self) -> Result<Vec<J>> {
        let mut pages = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let target = match &marker {
                Some(m) => format!("{}?marker={}", url(&self.path), encode_path(m).replace('/', "%2F")),
                None => url(&self.path),
            };
            let res = self.client.request("GET", &target, None, None, None)?;
            if res.status != 200 {
                return Err(api_error(&res));
            }
            let page = json::parse(&String::from_utf8_lossy(&res.body))
                .map_err(|e| Error::new(ErrorKind::Io, format!("the listing of {} is not JSON: {e}", self.uri())))?;
            marker = page.get("marker").and_then(J::as_str).filter(|m| !m.is_empty()).map(str::to_string);
            pages.push(page);
            if marker.is_none() {
                return Ok(pages);
            }
        }
    }

    /// Every file in it, with size and last-modified time.
    pub fn files(&self) -> Result<Vec<DataFile>> {
        let mut files = Vec::new();
        for page in self.pages()? {
            if let Some(J::Arr(entries)) = page.get("files") {
                for e in entries {
                    let Some(name) = e.get("filename").and_then(J::as_str) else { continue };
                    let mut f = self.file(name);
                    f.size = e.get("size").and_then(J::as_f64).map(|n| n as u64);
                    f.last_modified = e.get("last_modified").and_then(J::as_str).map(str::to_string);
                    files.push(f);
                }
            }
        }
        Ok(files)
    }

    /// Every directory in it.
    pub fn dirs(&self) -> Result<Vec<DataDir>> {
        let mut dirs = Vec::new();
        for page in self.pages()? {
            if let Some(J::Arr(entries)) = page.get("folders") {
                dirs.extend(entries.iter().filter_map(|e| e.get("name").and_then(J::as_str)).map(|n| self.dir(n)));
            }
        }
        Ok(dirs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_paths_and_decodes_base64() {
        assert_eq!(encode_path(".my/a b/é"), ".my/a%20b/%C3%A9");
        assert_eq!(base64_decode("AP8BgA==").unwrap(), vec![0, 255, 1, 128]);
        assert_eq!(base64_decode("").unwrap(), Vec::<u8>::new());
    }
}
