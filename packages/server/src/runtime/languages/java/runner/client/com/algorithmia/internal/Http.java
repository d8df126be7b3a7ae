package com.algorithmia.internal;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 exchange (not API): over the service's Unix socket when there is one (an isolated
 * algorithm reaches nothing else, and the JDK's HTTP clients cannot use AF_UNIX), else over TCP
 * to a plain http:// address. One connection per request, closed after it. Reads have no
 * timeout of their own (a Unix-domain channel offers none): the service answers every call
 * within that call's timeout, and the runner's own call has one too.
 */
public final class Http {
  private Http() {}

  /** A response whatever its status; header names in lower case. */
  public static final class Response {
    public final int status;
    public final Map<String, String> headers;
    public final byte[] body;

    Response(int status, Map<String, String> headers, byte[] body) {
      this.status = status;
      this.headers = headers;
      this.body = body;
    }

    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    /** The service's reason for a failure: X-Error-Message, else the JSON error's message. */
    public String errorMessage() {
      String header = headers.get("x-error-message");
      if (header != null && !header.isEmpty()) return header;
      try {
        Object parsed = Json.parse(text());
        Object error = parsed instanceof Map ? ((Map<?, ?>) parsed).get("error") : null;
        if (error instanceof Map && ((Map<?, ?>) error).get("message") != null) return String.valueOf(((Map<?, ?>) error).get("message"));
        if (error != null) return String.valueOf(error);
      } catch (IOException e) {
        // not JSON
      }
      String text = text();
      return "HTTP " + status + (text.isEmpty() ? "" : ": " + (text.length() > 500 ? text.substring(0, 500) : text));
    }
  }

  /**
   * @param socketPath the Unix socket, or null to connect to {@code host:port}
   * @param target the request target (path and query), already encoded
   */
  public static Response exchange(String socketPath, String host, int port, String method, String target, Map<String, String> headers, byte[] body)
      throws IOException {
    try (SocketChannel channel = socketPath != null ? unix(socketPath) : SocketChannel.open(new InetSocketAddress(host, port))) {
      StringBuilder head = new StringBuilder();
      head.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
      head.append("Host: ").append(socketPath != null ? "localhost" : host + ":" + port).append("\r\n");
      head.append("Connection: close\r\nAccept-Encoding: identity\r\n");
      for (Map.Entry<String, String> h : headers.entrySet()) head.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
      if (body != null || method.equals("POST") || method.equals("PUT") || method.equals("PATCH")) {
        head.append("Content-Length: ").append(body == null ? 0 : body.length).append("\r\n");
      }
      head.append("\r\n");
      OutputStream out = Channels.newOutputStream(channel);
      out.write(head.toString().getBytes(StandardCharsets.UTF_8));
      if (body != null) out.write(body);
      out.flush();
      return read(new BufferedInputStream(Channels.newInputStream(channel), 1 << 16), method);
    }
  }

  private static SocketChannel unix(String path) throws IOException {
    SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      channel.connect(UnixDomainSocketAddress.of(path));
    } catch (IOException e) {
      channel.close();
      throw e;
    }
    return channel;
  }

  private static Response read(InputStream in, String method) throws IOException {
    String statusLine = line(in);
    while (statusLine.isEmpty()) statusLine = line(in);
    String[] parts = statusLine.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/")) throw new IOException("not an HTTP response: " + statusLine);
    int status;
    try {
      status = Integer.parseInt(parts[1]);
    } catch (NumberFormatException e) {
      throw new IOException("not an HTTP status: " + statusLine);
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (String h = line(in); !h.isEmpty(); h = line(in)) {
      int colon = h.indexOf(':');
      if (colon > 0) headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
    }
    if (status == 100) return read(in, method);
    // A HEAD answer announces the length of the body it does not send.
    if (method.equals("HEAD") || status == 204 || status == 304) return new Response(status, headers, new byte[0]);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      while (true) {
        String size = line(in);
        int semicolon = size.indexOf(';');
        int n = Integer.parseInt((semicolon >= 0 ? size.substring(0, semicolon) : size).trim(), 16);
        if (n == 0) {
          while (!line(in).isEmpty()) {
            // trailers
          }
          break;
        }
        copy(in, body, n);
        line(in);
      }
    } else if (headers.containsKey("content-length")) {
      copy(in, body, Long.parseLong(headers.get("content-length")));
    } else {
      in.transferTo(body);
    }
    return new Response(status, headers, body.toByteArray());
  }

  private static void copy(InputStream in, ByteArrayOutputStream out, long n) throws IOException {
    byte[] buffer = new byte[8192];
    while (n > 0) {
      int got = in.read(buffer, 0, (int) Math.min(buffer.length, n));
      if (got < 0) throw new EOFException("the service closed the connection mid-response");
      out.write(buffer, 0, got);
      n -= got;
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        if (line.size() == 0) throw new EOFException("the service closed the connection");
        break;
      }
      if (b == '\n') break;
      line.write(b);
    }
    String s = line.toString(StandardCharsets.ISO_8859_1);
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }
}
