package com.algorithmia.data;

import com.algorithmia.APIException;
import com.algorithmia.AlgorithmiaClient;
import com.algorithmia.internal.Http;
import java.nio.charset.StandardCharsets;

/** A hosted file, {@code data://owner/collection/path} (docs/compatibility.md §5). */
public final class DataFile extends DataObject {
  private Long size;
  private String lastModified;

  public DataFile(AlgorithmiaClient client, String dataUri) {
    super(client, dataUri);
  }

  DataFile withAttributes(Long size, String lastModified) {
    this.size = size;
    this.lastModified = lastModified;
    return this;
  }

  /** The size in bytes, as listed by {@link DataDirectory#files()}; null otherwise. */
  public Long getSize() {
    return size;
  }

  /** YYYY-MM-DDTHH:MM:SS.mmmZ, as listed by {@link DataDirectory#files()}; null otherwise. */
  public String getLastModified() {
    return lastModified;
  }

  public byte[] getBytes() throws APIException {
    Http.Response res = check(client.request("GET", url(), null, null, "application/octet-stream", null), true);
    if ("directory".equals(res.headers.get("x-data-type"))) throw new APIException(getDataUri() + " is a directory, not a file");
    return res.body;
  }

  /** The content as UTF-8 text. */
  public String getString() throws APIException {
    return new String(getBytes(), StandardCharsets.UTF_8);
  }

  /** Stores the text as UTF-8, replacing the file if it exists. */
  public DataFile put(String text) throws APIException {
    return put(text.getBytes(StandardCharsets.UTF_8), "text/plain; charset=utf-8");
  }

  /** Stores the bytes as they are, replacing the file if it exists. */
  public DataFile put(byte[] data) throws APIException {
    return put(data, "application/octet-stream");
  }

  private DataFile put(byte[] body, String contentType) throws APIException {
    check(client.request("PUT", url(), null, contentType, null, body), false);
    return this;
  }

  public void delete() throws APIException {
    check(client.request("DELETE", url(), null, null, null, null), false);
  }
}
