//! The runner harness for Rust algorithms (docs/compatibility.md §4, catalog/templates/README.md "Rust").
//!
//! Built with the algorithm's library crate as the dependency `algorithm` (whatever its package
//! and lib names) into the binary `target/release/algorithm`. Prints PIPE_INIT_COMPLETE, then
//! answers one JSON request per stdin line with one JSON line on the response FIFO, calling
//! `algorithm::apply(serde_json::Value)`. A panic in apply is an AlgorithmError for that call
//! and the runner keeps serving. The harness writes nothing else to stdout, except the output
//! marks (catalog/templates/README.md "Output marks"): with `ALGOHOST_OUTPUT_MARK` set, after
//! each request the token goes once to stdout and once to stderr, before the response.

use std::cell::RefCell;
use std::fmt::Display;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::panic::{self, AssertUnwindSafe};

use serde_json::{json, Value};

const SENTINEL: &str = "PIPE_INIT_COMPLETE";
const CALL_KEY: &str = "ALGORITHMIA_API_KEY";

/// What `apply` may return: the template's `Result<Value, String>`, any `Result<Value, E>`
/// whose error displays (Box<dyn Error>, anyhow…), or a bare `Value`.
trait Outcome {
    fn outcome(self) -> Result<Value, String>;
}

impl<E: Display> Outcome for Result<Value, E> {
    fn outcome(self) -> Result<Value, String> {
        self.map_err(|e| e.to_string())
    }
}

impl Outcome for Value {
    fn outcome(self) -> Result<Value, String> {
        Ok(self)
    }
}

thread_local! {
    /// Set while apply runs on this thread: its panic is recorded here instead of printed.
    static PANIC: RefCell<Option<Option<(String, String)>>> = const { RefCell::new(None) };
}

fn error(error_type: &str, message: &str, stacktrace: &str) -> Value {
    json!({ "error": {
        "message": message,
        "stacktrace": stacktrace,
        "stack_trace": stacktrace,
        "error_type": error_type,
    } })
}

fn handle(line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return error("InputError", &format!("the request is not valid JSON: {e}"), ""),
    };
    let data = request.get("data").cloned().unwrap_or(Value::Null);
    let input = match request.get("content_type").and_then(Value::as_str) {
        Some("json") => data,
        Some("text") => match data {
            Value::String(_) => data,
            _ => return error("InputError", "text input must be a string", ""),
        },
        Some("binary") => {
            return error(
                "InputError",
                "binary input is not supported by Rust algorithms (apply takes a serde_json::Value): send JSON or text",
                "",
            )
        }
        other => return error("InputError", &format!("unknown content_type {other:?} (json, text or binary)"), ""),
    };

    // What the service passes for this call only, in the environment while apply runs and not
    // after: a key scoped to it (pipeline_enabled algorithms; the crate `algorithmia` reads it),
    // where an Event Flow's input came from (ALGOHOST_EVENT as JSON: topic, partition, offset,
    // key…, so the algorithm can be idempotent) and the Insights token (insights_enabled versions).
    let mut call_env: Vec<(&str, String)> = Vec::new();
    if let Some(k) = request.get("api_key").and_then(Value::as_str).filter(|k| !k.is_empty()) {
        call_env.push((CALL_KEY, k.to_string()));
    }
    if let Some(event) = request.get("event").filter(|e| e.as_object().is_some_and(|o| !o.is_empty())) {
        call_env.push(("ALGOHOST_EVENT", event.to_string()));
    }
    if let Some(t) = request.get("insights_token").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        call_env.push(("ALGOHOST_INSIGHTS_TOKEN", t.to_string()));
    }
    let previous: Vec<_> = call_env.iter().map(|(k, _)| (*k, std::env::var_os(k))).collect();
    for (k, v) in &call_env {
        std::env::set_var(k, v);
    }
    PANIC.with(|p| *p.borrow_mut() = Some(None));
    let result = panic::catch_unwind(AssertUnwindSafe(|| algorithm::apply(input).outcome()));
    let panicked = PANIC.with(|p| p.borrow_mut().take()).flatten();
    for (k, v) in previous {
        match v {
            Some(v) => std::env::set_var(k, v),
            None => std::env::remove_var(k),
        }
    }
    match result {
        Ok(Ok(Value::String(s))) => json!({ "result": s, "metadata": { "content_type": "text" } }),
        Ok(Ok(v)) => json!({ "result": v, "metadata": { "content_type": "json" } }),
        Ok(Err(message)) => error("AlgorithmError", &message, ""),
        Err(payload) => {
            let (message, trace) = panicked.unwrap_or_else(|| (payload_message(payload.as_ref()), String::new()));
            error("AlgorithmError", &message, &trace)
        }
    }
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "apply panicked".to_string()
    }
}

/// Source paths of the algorithm as the user knows them (it is built at /build/src).
fn relative(file: &str) -> &str {
    file.strip_prefix("/build/src/").unwrap_or(file)
}

/// The frames of a backtrace between the panic machinery and the harness: the algorithm's own.
fn algorithm_frames(backtrace: &str) -> String {
    let mut frames: Vec<Vec<&str>> = Vec::new();
    for line in backtrace.lines() {
        let t = line.trim_start();
        let starts_frame = t.split_once(':').is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        match frames.last_mut() {
            Some(frame) if !starts_frame => frame.push(line),
            _ => frames.push(vec![line]),
        }
    }
    let symbol = |frame: &Vec<&str>| frame[0].split_once(':').map(|(_, s)| s.trim()).unwrap_or("").to_string();
    // Like Rust's own short backtraces: after the panic entry point, up to the harness's frames.
    let start = frames.iter().position(|f| symbol(f).contains("__rust_end_short_backtrace")).map_or(0, |i| i + 1);
    let harness = |s: &str| s == "algorithm::main" || s.starts_with("algorithm::handle") || s.contains("__rust_begin_short_backtrace") || s.contains("lang_start");
    let mut end = frames[start..].iter().position(|f| harness(&symbol(f))).map_or(frames.len(), |i| start + i);
    while end > start && { let s = symbol(&frames[end - 1]); s.contains("catch_unwind") || s.contains("panicking::try") } {
        end -= 1;
    }
    frames[start..end].iter().flatten().map(|l| l.replace("/build/src/", "")).collect::<Vec<_>>().join("\n")
}

extern "C" {
    fn dup2(old: i32, new: i32) -> i32;
    /// C stdio's flush; NULL = every output stream.
    fn fflush(stream: *mut std::ffi::c_void) -> i32;
}

/// A private copy of descriptor `fd`, close-on-exec (F_DUPFD_CLOEXEC), so the algorithm's
/// subprocesses do not inherit it.
fn private_copy(fd: i32, what: &str) -> File {
    // SAFETY: fds 0, 1 and 2 are open for the whole life of the process (the service gives them);
    // the borrow lasts only for the duplication.
    match unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned() {
        Ok(owned) => File::from(owned),
        Err(e) => {
            eprintln!("algohost runner: cannot duplicate {what}: {e}");
            std::process::exit(1);
        }
    }
}

/// The requests, on a private copy of stdin; fd 0 becomes /dev/null, so an algorithm reading
/// stdin gets nothing instead of taking the next request.
fn requests() -> File {
    let requests = private_copy(0, "stdin");
    if let Ok(null) = File::open("/dev/null") {
        // SAFETY: both descriptors are open; fd 0 is replaced, the copy above is untouched.
        unsafe { dup2(null.as_raw_fd(), 0) };
    }
    requests
}

/// Where each request's output ends: the service's token and the harness's own copies of fds 1
/// and 2, taken before any code of the algorithm runs, so an algorithm that closes or redirects
/// its stdout or stderr loses no mark.
struct Marks {
    token: Vec<u8>,
    stdout: File,
    stderr: File,
}

impl Marks {
    /// None without `ALGOHOST_OUTPUT_MARK` (ADK local runs, the bench's baseline): no marks.
    fn take() -> Option<Marks> {
        let token = std::env::var_os("ALGOHOST_OUTPUT_MARK").filter(|t| !t.is_empty())?;
        // The token is the harness's: the algorithm and its subprocesses do not see it (one that
        // printed it would cut its own output in the wrong place). Still one thread here.
        std::env::remove_var("ALGOHOST_OUTPUT_MARK");
        Some(Marks {
            token: std::os::unix::ffi::OsStrExt::as_bytes(token.as_os_str()).to_vec(),
            stdout: private_copy(1, "stdout"),
            stderr: private_copy(2, "stderr"),
        })
    }

    /// Ends the request's output on both streams; the caller has flushed the algorithm's own.
    fn write(&mut self) -> io::Result<()> {
        self.stdout.write_all(&self.token)?;
        self.stderr.write_all(&self.token)
    }
}

/// Pushes out what the algorithm printed and still sits in a buffer: Rust's stdout (a
/// LineWriter, which keeps a line without its newline), stderr (unbuffered, flushed anyway) and
/// C stdio's streams (a C dependency's printf, fully buffered on a pipe). It then belongs to the
/// request that printed it, before its mark and its response.
fn flush_output() {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    // SAFETY: fflush(NULL) is defined: it flushes every open output stream of C stdio.
    unsafe { fflush(std::ptr::null_mut()) };
}

fn main() {
    let fifo = std::env::var("ALGOHOST_RESPONSE_FIFO").unwrap_or_else(|_| "/tmp/algoout".to_string());
    let mut marks = Marks::take();

    // A panic inside apply becomes that call's error (message, location and backtrace); panics
    // elsewhere (threads the algorithm started) are printed as usual.
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let recorded = PANIC.with(|p| {
            let mut slot = p.borrow_mut();
            match slot.as_mut() {
                Some(inner) => {
                    let message = payload_message(info.payload());
                    let location = info
                        .location()
                        .map(|l| format!("panicked at {}:{}:{}", relative(l.file()), l.line(), l.column()))
                        .unwrap_or_default();
                    let backtrace = algorithm_frames(&std::backtrace::Backtrace::force_capture().to_string());
                    *inner = Some((message, format!("{location}\n{backtrace}").trim_end().to_string()));
                    true
                }
                None => false,
            }
        });
        if !recorded {
            default_hook(info);
        }
    }));

    {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{SENTINEL}");
        let _ = out.flush();
    }

    let mut reader = io::BufReader::with_capacity(1 << 16, requests());
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("algohost runner: cannot read the request: {e}");
                std::process::exit(1);
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        let response = handle(line.trim_end_matches(['\n', '\r']));
        // What apply printed belongs to this call: it leaves before the marks, which leave
        // before the response (the service may already have written the next request).
        flush_output();
        if let Some(marks) = marks.as_mut() {
            if let Err(e) = marks.write() {
                eprintln!("algohost runner: cannot write the output mark: {e}");
                std::process::exit(1);
            }
        }
        let mut text = serde_json::to_string(&response).unwrap_or_else(|e| {
            error("AlgorithmError", &format!("the result of apply cannot be sent as JSON: {e}"), "").to_string()
        });
        text.push('\n');
        let written = OpenOptions::new().write(true).open(&fifo).and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = written {
            eprintln!("algohost runner: cannot write the response to {fifo}: {e}");
            std::process::exit(1);
        }
    }
}
