/**
 * Python for hostile test algorithms that talk to the service's API socket themselves, as any
 * `pipeline_enabled` algorithm may, without a client library: one HTTP/1.1 request per
 * connection. `api_request(method, path, key=None, body=b"", content_type=None)` answers
 * `{"status": …, "body": <the first 300 characters>}`; `key` None sends the call's own key
 * (ALGORITHMIA_API_KEY), "" sends no Authorization at all.
 */
export const PYTHON_API_REQUEST = String.raw`
import os, socket

def api_request(method, path, key=None, body=b"", content_type=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.environ["ALGOHOST_API_SOCKET"])
    key = os.environ.get("ALGORITHMIA_API_KEY", "") if key is None else key
    head = "%s %s HTTP/1.1\r\nHost: localhost\r\n" % (method, path)
    if key:
        head += "Authorization: Simple %s\r\n" % key
    if content_type:
        head += "Content-Type: %s\r\n" % content_type
    head += "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    s.sendall(head.encode() + body)
    answer = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        answer += chunk
    s.close()
    return {"status": int(answer.split(b" ", 2)[1]), "body": answer.split(b"\r\n\r\n", 1)[1].decode(errors="replace")[:300]}
`;
