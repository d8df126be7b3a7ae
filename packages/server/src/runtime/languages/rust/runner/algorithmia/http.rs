//! One HTTP/1.1 exchange per request: over the service's Unix socket when there is one (an
//! isolated algorithm reaches nothing else), else over TCP to a plain http:// address.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

pub(crate) struct Response {
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

pub(crate) enum Endpoint<'a> {
    Unix(&'a str),
    Tcp(&'a str, u16),
}

pub(crate) fn exchange(
    endpoint: &Endpoint,
    method: &str,
    target: &str,
    headers: &[(&str, String)],
    body: Option<&[u8]>,
    timeout: Duration,
) -> std::io::Result<Response> {
    let mut head = format!("{method} {target} HTTP/1.1\r\n");
    match endpoint {
        Endpoint::Unix(_) => head.push_str("Host: localhost\r\n"),
        Endpoint::Tcp(host, port) => head.push_str(&format!("Host: {host}:{port}\r\n")),
    }
    head.push_str("Connection: close\r\nAccept-Encoding: identity\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if body.is_some() || matches!(method, "POST" | "PUT" | "PATCH") {
        head.push_str(&format!("Content-Length: {}\r\n", body.map_or(0, <[u8]>::len)));
    }
    head.push_str("\r\n");
    let mut request = head.into_bytes();
    if let Some(b) = body {
        request.extend_from_slice(b);
    }
    match endpoint {
        Endpoint::Unix(path) => {
            let mut s = UnixStream::connect(path)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            s.write_all(&request)?;
            read(BufReader::new(s), method)
        }
        Endpoint::Tcp(host, port) => {
            let mut s = TcpStream::connect((*host, *port))?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            s.write_all(&request)?;
            read(BufReader::new(s), method)
        }
    }
}

fn invalid(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why)
}

fn line<R: BufRead>(r: &mut R) -> std::io::Result<String> {
    let mut buf = Vec::new();
    if r.read_until(b'\n', &mut buf)? == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the service closed the connection"));
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    // Header bytes are ISO-8859-1.
    Ok(buf.iter().map(|&b| b as char).collect())
}

fn read<R: BufRead>(mut r: R, method: &str) -> std::io::Result<Response> {
    loop {
        let status_line = line(&mut r)?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .filter(|_| version.starts_with("HTTP/"))
            .ok_or_else(|| invalid(format!("not an HTTP response: {status_line}")))?;
        let mut headers = Vec::new();
        loop {
            let h = line(&mut r)?;
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        if status == 100 {
            continue;
        }
        let mut res = Response { status, headers, body: Vec::new() };
        // A HEAD answer announces the length of the body it does not send.
        if method == "HEAD" || status == 204 || status == 304 {
            return Ok(res);
        }
        if res.header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
            loop {
                let size = line(&mut r)?;
                let n = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
                    .map_err(|_| invalid(format!("bad chunk size {size:?}")))?;
                if n == 0 {
                    while !line(&mut r)?.is_empty() {}
                    break;
                }
                let start = res.body.len();
                res.body.resize(start + n, 0);
                r.read_exact(&mut res.body[start..])?;
                line(&mut r)?;
            }
        } else if let Some(n) = res.header("content-length").and_then(|n| n.parse::<usize>().ok()) {
            res.body.resize(n, 0);
            r.read_exact(&mut res.body)?;
        } else {
            r.read_to_end(&mut res.body)?;
        }
        return Ok(res);
    }
}
