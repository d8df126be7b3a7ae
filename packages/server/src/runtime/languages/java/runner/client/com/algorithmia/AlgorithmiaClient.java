package com.algorithmia;

import com.algorithmia.algo.Algorithm;
import com.algorithmia.data.DataDirectory;
import com.algorithmia.data.DataFile;
import com.algorithmia.internal.Http;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Calls other algorithms ({@link #algo}) and hosted data ({@link #file}, {@link #dir}). */
public final class AlgorithmiaClient {
  /**
   * Where the runner puts the key of the call in progress: a JVM cannot change its own
   * environment, so the harness sets this system property while apply runs.
   */
  static final String CALL_KEY_PROPERTY = "algorithmia.api.key";

  private final String apiKey;
  private final String apiAddress;

  AlgorithmiaClient(String apiKey, String apiAddress) {
    this.apiKey = apiKey == null || apiKey.isEmpty() ? null : apiKey;
    this.apiAddress = apiAddress == null || apiAddress.isEmpty() ? null : apiAddress;
  }

  /** An algorithm as {@code owner/name[/version]} (an {@code algo://} prefix is allowed). */
  public Algorithm algo(String ref) {
    return new Algorithm(this, ref);
  }

  /** A hosted file, {@code data://owner/collection/path} ({@code .my} = the caller). */
  public DataFile file(String dataUri) {
    return new DataFile(this, dataUri);
  }

  /** A hosted directory or collection, {@code data://owner/collection[/path]}. */
  public DataDirectory dir(String dataUri) {
    return new DataDirectory(this, dataUri);
  }

  private String key() {
    if (apiKey != null) return apiKey;
    String key = System.getProperty(CALL_KEY_PROPERTY);
    if (key == null || key.isEmpty()) key = System.getenv("ALGORITHMIA_API_KEY");
    return key == null || key.isEmpty() ? null : key;
  }

  /**
   * One request to the service (path under the API root, e.g. /v1/algo/...); returns the
   * response whatever its status. Not part of the API algorithms are meant to use.
   */
  public Http.Response request(String method, String path, Map<String, String> query, String contentType, String accept, byte[] body)
      throws APIException {
    String key = key();
    if (key == null) throw new APIKeyMissingException();
    String address = apiAddress != null ? apiAddress : System.getenv("ALGORITHMIA_API");
    String socket = System.getenv("ALGOHOST_API_SOCKET");
    if (socket != null && socket.isEmpty()) socket = null;
    if ((address == null || address.isEmpty()) && socket == null) throw new APIException("no API address: ALGORITHMIA_API is not set");
    URI base = URI.create(address == null || address.isEmpty() ? "http://localhost" : address);
    if (socket == null && !"http".equals(base.getScheme())) {
      throw new APIException("the in-algorithm client speaks plain http:// only, not " + address);
    }
    StringBuilder target = new StringBuilder(base.getRawPath() == null ? "" : base.getRawPath().replaceAll("/+$", "")).append(path);
    if (query != null && !query.isEmpty()) {
      char sep = '?';
      for (Map.Entry<String, String> q : query.entrySet()) {
        target.append(sep).append(encode(q.getKey())).append('=').append(encode(q.getValue()));
        sep = '&';
      }
    }
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Authorization", "Simple " + key);
    if (contentType != null) headers.put("Content-Type", contentType);
    if (accept != null) headers.put("Accept", accept);
    try {
      return Http.exchange(socket, base.getHost(), base.getPort() < 0 ? 80 : base.getPort(), method, target.toString(), headers, body);
    } catch (IOException e) {
      throw new APIException("cannot reach the algohost API: " + e.getMessage(), e);
    }
  }

  /** One path segment or query value, percent-encoded. */
  public static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
