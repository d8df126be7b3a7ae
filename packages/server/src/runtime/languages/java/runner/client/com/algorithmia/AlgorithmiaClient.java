package com.algorithmia;

import com.algorithmia.algo.Algorithm;
import com.algorithmia.data.DataDirectory;
import com.algorithmia.data.DataFile;
import com.algorithmia.internal.Http;
import com.algorithmia.internal.Json;
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

  /**
   * Insights: reports metrics (key → value) from a call of a version with insights_enabled, as
   * POST /v1/insights without an Authorization header; returns how many were accepted. Elsewhere
   * (no token: the runner sets one only while such a call runs) it does nothing and returns 0, so
   * the same code runs whether or not the version has Insights on.
   */
  public int reportInsights(Map<String, ?> insights) throws APIException {
    String token = System.getProperty("algohost.insights.token");
    if (token == null || token.isEmpty()) return 0;
    java.util.List<Map<String, Object>> report = new java.util.ArrayList<>();
    for (Map.Entry<String, ?> e : insights.entrySet()) {
      Map<String, Object> metric = new LinkedHashMap<>();
      metric.put("insight_key", e.getKey());
      metric.put("insight_value", e.getValue());
      report.add(metric);
    }
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("X-Algohost-Insights-Token", token);
    byte[] body = Json.write(report).getBytes(StandardCharsets.UTF_8);
    Http.Response res = send("POST", "/v1/insights", null, headers, "application/json", null, body);
    if (res.status >= 300) throw new APIException(res.errorMessage());
    try {
      Object parsed = Json.parse(res.text());
      Object accepted = parsed instanceof Map ? ((Map<?, ?>) parsed).get("accepted") : null;
      return accepted instanceof Number ? ((Number) accepted).intValue() : 0;
    } catch (IOException e) {
      throw new APIException("the Insights answer is not JSON: " + e.getMessage(), e);
    }
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
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Authorization", "Simple " + key);
    return send(method, path, query, headers, contentType, accept, body);
  }

  private Http.Response send(
      String method, String path, Map<String, String> query, Map<String, String> headers, String contentType, String accept, byte[] body)
      throws APIException {
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
