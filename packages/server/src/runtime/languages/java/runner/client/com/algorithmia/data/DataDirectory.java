package com.algorithmia.data;

import com.algorithmia.APIException;
import com.algorithmia.AlgorithmiaClient;
import com.algorithmia.internal.Http;
import com.algorithmia.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A hosted directory or collection, {@code data://owner/collection[/path]} (docs/compatibility.md §5). */
public final class DataDirectory extends DataObject {
  public DataDirectory(AlgorithmiaClient client, String dataUri) {
    super(client, dataUri);
  }

  public DataFile file(String name) {
    return new DataFile(client, "data://" + path + "/" + name);
  }

  public DataDirectory dir(String name) {
    return new DataDirectory(client, "data://" + path + "/" + name);
  }

  /** Creates it in its parent (under data://.my a collection of the caller). */
  public DataDirectory create() throws APIException {
    int slash = path.lastIndexOf('/');
    if (slash < 0) throw new APIException(getDataUri() + " has no parent to create it in");
    StringBuilder body = new StringBuilder("{\"name\":");
    Json.string(body, getName());
    body.append('}');
    check(client.request("POST", urlPath(path.substring(0, slash)), null, "application/json", null, body.toString().getBytes(StandardCharsets.UTF_8)), true);
    return this;
  }

  /** Deletes it; {@code force} deletes what it holds too. */
  public void delete(boolean force) throws APIException {
    check(client.request("DELETE", url(), force ? Map.of("force", "true") : null, null, null, null), false);
  }

  /** Every file in it (all pages of the listing), with size and last-modified time. */
  public List<DataFile> files() throws APIException {
    List<DataFile> files = new ArrayList<>();
    for (Map<?, ?> page : pages()) {
      if (!(page.get("files") instanceof List)) continue;
      for (Object entry : (List<?>) page.get("files")) {
        if (!(entry instanceof Map)) continue;
        Map<?, ?> e = (Map<?, ?>) entry;
        Object size = e.get("size");
        Object modified = e.get("last_modified");
        files.add(file(String.valueOf(e.get("filename")))
            .withAttributes(size instanceof Number ? ((Number) size).longValue() : null, modified instanceof String ? (String) modified : null));
      }
    }
    return files;
  }

  /** Every directory in it (all pages of the listing). */
  public List<DataDirectory> dirs() throws APIException {
    List<DataDirectory> dirs = new ArrayList<>();
    for (Map<?, ?> page : pages()) {
      if (!(page.get("folders") instanceof List)) continue;
      for (Object entry : (List<?>) page.get("folders")) {
        if (entry instanceof Map) dirs.add(dir(String.valueOf(((Map<?, ?>) entry).get("name"))));
      }
    }
    return dirs;
  }

  private List<Map<?, ?>> pages() throws APIException {
    List<Map<?, ?>> pages = new ArrayList<>();
    String marker = null;
    do {
      Http.Response res = check(client.request("GET", url(), marker == null ? null : Map.of("marker", marker), null, null, null), true);
      Object page;
      try {
        page = Json.parse(res.text());
      } catch (IOException e) {
        throw new APIException("the listing of " + getDataUri() + " is not JSON: " + e.getMessage());
      }
      if (!(page instanceof Map)) throw new APIException("the listing of " + getDataUri() + " is not a JSON object");
      pages.add((Map<?, ?>) page);
      Object next = ((Map<?, ?>) page).get("marker");
      marker = next instanceof String && !((String) next).isEmpty() ? (String) next : null;
    } while (marker != null);
    return pages;
  }
}
