# frozen_string_literal: true

# The in-algorithm API client for Ruby algorithms: `require "algorithmia"` finds it (the harness
# puts this directory on $LOAD_PATH). `Algorithmia.client.algo("owner/name/version").pipe(input)`
# calls another algorithm and returns a response with #result and #metadata; an error envelope
# raises Algorithmia::AlgorithmError with its message (and error_type). `client.file(uri)` and
# `client.dir(uri)` reach hosted data (data://owner/collection/..., data://.my/... = the caller;
# docs/compatibility.md §5). Address: the api_address argument, else $ALGORITHMIA_API; when $ALGOHOST_API_SOCKET
# names a Unix socket every request goes over it. Key: the api_key argument, else
# $ALGORITHMIA_API_KEY read at each request: the runner sets it only while a call runs
# (pipeline_enabled algorithms only), so a client made when the file loads still uses the key of
# the call in progress. Only the standard library (net/http loads on first use).
require "json"
require "uri"

module Algorithmia
  DEFAULT_TIMEOUT = 300
  KEY_MISSING = "no API key: calling other algorithms and hosted data from an algorithm needs " \
                "pipeline_enabled in the algorithm's settings (ALGORITHMIA_API_KEY is not set)"

  # A failure reported by the service.
  class ApiError < StandardError; end

  # An algorithm call failed; error_type is the callee's when known.
  class AlgorithmError < ApiError
    attr_reader :error_type

    def initialize(message, error_type = nil)
      super(message)
      @error_type = error_type
    end
  end

  # The algorithm has no API key: the service gives one only to algorithms with pipeline_enabled.
  class ApiKeyMissingError < AlgorithmError
    def initialize(message = KEY_MISSING)
      super(message, "AlgorithmError")
    end
  end

  # The answer of a call: result (binary results as ASCII-8BIT strings) and metadata.
  class Response
    attr_reader :result, :metadata, :body

    def initialize(result, metadata, body)
      @result = result
      @metadata = metadata
      @body = body
    end

    def content_type
      metadata["content_type"]
    end
  end

  # One algorithm, addressed as owner/name[/version].
  class Algorithm
    attr_reader :client, :ref, :options

    def initialize(client, ref)
      @client = client
      @ref = ref.to_s.sub(%r{\Aalgo://}, "").sub(%r{\A/+}, "")
      @options = {}
    end

    # Query parameters of the call (timeout, stdout, output).
    def set_options(options = {})
      @options.merge!(options.transform_keys(&:to_s))
      self
    end

    # Calls the algorithm; returns a Response, raises AlgorithmError.
    def pipe(input)
      body, content_type = encode(input)
      timeout = (Float(options.fetch("timeout", DEFAULT_TIMEOUT)) rescue DEFAULT_TIMEOUT) + 60
      path = "/v1/algo/" + ref.split("/").map { |part| URI.encode_www_form_component(part) }.join("/")
      status, headers, data = client.request("POST", path, body: body, content_type: content_type,
                                                           query: options, timeout: timeout)
      if options["output"] == "raw"
        raise AlgorithmError, Algorithmia.error_message(status, headers, data) if status >= 300

        return data.force_encoding(Encoding::UTF_8)
      end
      parsed = begin
        JSON.parse(data.dup.force_encoding(Encoding::UTF_8))
      rescue JSON::ParserError
        raise AlgorithmError, Algorithmia.error_message(status, headers, data)
      end
      raise AlgorithmError, "unexpected response from the service: #{data[0, 500]}" unless parsed.is_a?(Hash)

      error = parsed["error"]
      if error.is_a?(Hash)
        raise AlgorithmError.new((error["message"] || Algorithmia.error_message(status, headers, data)).to_s,
                                 error["error_type"].is_a?(String) ? error["error_type"] : nil)
      end
      raise AlgorithmError, error.to_s unless error.nil?
      raise AlgorithmError, Algorithmia.error_message(status, headers, data) if status >= 300

      metadata = parsed["metadata"].is_a?(Hash) ? parsed["metadata"] : {}
      result = parsed["result"]
      result = result.unpack1("m") if metadata["content_type"] == "binary" && result.is_a?(String)
      Response.new(result, metadata, parsed)
    end

    private

    # ASCII-8BIT String → octet-stream, other String → text/plain, anything else → JSON.
    def encode(value)
      return [value.b, "application/octet-stream"] if value.is_a?(String) && value.encoding == Encoding::ASCII_8BIT
      return [value.encode(Encoding::UTF_8), "text/plain"] if value.is_a?(String)

      [JSON.generate(value), "application/json"]
    end
  end

  # `data://owner/collection/x` (or `owner/...`) -> `owner/collection/x`.
  def self.data_path(uri)
    uri.to_s.sub(%r{\Adata://}, "").gsub(%r{\A/+|/+\z}, "")
  end

  # The HTTP path of a data path, each segment percent-encoded.
  def self.data_url(path)
    "/v1/data/" + path.split("/").map { |part| URI.encode_www_form_component(part).gsub("+", "%20") }.join("/")
  end

  # What files and directories share: the path, the name, exists?.
  class DataObject
    attr_reader :client, :path

    def initialize(client, uri)
      @client = client
      @path = Algorithmia.data_path(uri)
    end

    def basename
      path.split("/").last
    end

    def data_uri
      "data://#{path}"
    end

    # HEAD: true for 200, false for 404, an error otherwise.
    def exists?
      status, headers, body = client.request("HEAD", Algorithmia.data_url(path))
      return true if status == 200
      return false if status == 404

      raise ApiError, Algorithmia.error_message(status, headers, body)
    end

    private

    def check(response, exactly200: false)
      status, headers, body = response
      raise ApiError, Algorithmia.error_message(status, headers, body) if exactly200 ? status != 200 : status >= 300

      response
    end
  end

  # A hosted file, data://owner/collection/path (docs/compatibility.md §5).
  class DataFile < DataObject
    # Set for files listed by DataDirectory#files.
    attr_accessor :size, :last_modified

    # The content as an ASCII-8BIT String.
    def get_bytes
      _, headers, body = check(client.request("GET", Algorithmia.data_url(path), accept: "application/octet-stream"),
                               exactly200: true)
      raise ApiError, "#{data_uri} is a directory, not a file" if headers["x-data-type"] == "directory"

      body
    end

    # The content as UTF-8 text.
    def get_string
      get_bytes.force_encoding(Encoding::UTF_8)
    end
    alias get get_string

    # Stores an ASCII-8BIT String as bytes and any other String as UTF-8 text, replacing the file.
    def put(data)
      raise TypeError, "put takes a String" unless data.is_a?(String)

      binary = data.encoding == Encoding::ASCII_8BIT
      check(client.request("PUT", Algorithmia.data_url(path), body: binary ? data : data.encode(Encoding::UTF_8),
                                                              content_type: binary ? "application/octet-stream" : "text/plain; charset=utf-8"))
      self
    end

    def delete
      check(client.request("DELETE", Algorithmia.data_url(path)))
      true
    end
  end

  # A hosted directory or collection, data://owner/collection[/path] (docs/compatibility.md §5).
  class DataDirectory < DataObject
    def file(name)
      DataFile.new(client, "#{path}/#{name}")
    end

    def dir(name)
      DataDirectory.new(client, "#{path}/#{name}")
    end

    # Creates it in its parent (under data://.my a collection of the caller).
    def create
      parent, _, name = path.rpartition("/")
      raise ApiError, "#{data_uri} has no parent to create it in" if parent.empty?

      check(client.request("POST", Algorithmia.data_url(parent), body: JSON.generate({ "name" => name }),
                                                                 content_type: "application/json"), exactly200: true)
      self
    end

    # Deletes it; force deletes what it holds too.
    def delete(force = false)
      check(client.request("DELETE", Algorithmia.data_url(path), query: force ? { "force" => "true" } : nil))
      true
    end

    # Every file in it (DataFile with size and last_modified); an Enumerator without a block.
    def each_file
      return enum_for(:each_file) unless block_given?

      pages.each do |page|
        (page["files"] || []).each do |entry|
          f = file(entry["filename"])
          f.size = entry["size"]
          f.last_modified = entry["last_modified"]
          yield f
        end
      end
    end

    # Every directory in it; an Enumerator without a block.
    def each_dir
      return enum_for(:each_dir) unless block_given?

      pages.each { |page| (page["folders"] || []).each { |entry| yield dir(entry["name"]) } }
    end

    def files
      each_file.to_a
    end

    def dirs
      each_dir.to_a
    end

    private

    # Every page of the listing (folders and files may come on separate pages).
    def pages
      result = []
      marker = nil
      loop do
        _, _, body = check(client.request("GET", Algorithmia.data_url(path), query: marker ? { "marker" => marker } : nil),
                           exactly200: true)
        page = JSON.parse(body.force_encoding(Encoding::UTF_8))
        result << page
        marker = page["marker"]
        break unless marker.is_a?(String) && !marker.empty?
      end
      result
    end
  end

  # Net::HTTP over a Unix stream socket.
  def self.unix_http_class
    @unix_http_class ||= Class.new(Net::HTTP) do
      attr_accessor :socket_path

      def connect
        io = UNIXSocket.new(socket_path)
        @socket = Net::BufferedIO.new(io, read_timeout: @read_timeout, write_timeout: @write_timeout,
                                          continue_timeout: @continue_timeout, debug_output: @debug_output)
        on_connect
      end
    end
  end

  # The service's reason for a failed response: X-Error-Message, else the JSON error's message.
  def self.error_message(status, headers, data)
    header = headers["x-error-message"]
    return header if header.is_a?(String) && !header.empty?

    begin
      parsed = JSON.parse(data.dup.force_encoding(Encoding::UTF_8))
      error = parsed["error"] if parsed.is_a?(Hash)
      return error["message"].to_s if error.is_a?(Hash) && error["message"]
      return error.to_s if error
    rescue StandardError
      nil
    end
    text = data.to_s[0, 500]
    "HTTP #{status}#{text.empty? ? '' : ": #{text}"}"
  end

  # The client: key and address from the arguments, else from the environment.
  class Client
    attr_reader :api_key, :api_address, :socket_path

    def initialize(api_key = nil, api_address = nil)
      @api_key = non_empty(api_key)
      @api_address = api_address || non_empty(ENV["ALGORITHMIA_API"])
      @socket_path = non_empty(ENV["ALGOHOST_API_SOCKET"])
    end

    def algo(ref)
      Algorithm.new(self, ref)
    end

    # A hosted file, data://owner/collection/path.
    def file(uri)
      DataFile.new(self, uri)
    end

    # A hosted directory or collection, data://owner/collection[/path].
    def dir(uri)
      DataDirectory.new(self, uri)
    end

    # Insights: reports metrics ({key => value}) from a call of a version with insights_enabled, as
    # POST /v1/insights without an Authorization header. Elsewhere (no $ALGOHOST_INSIGHTS_TOKEN,
    # set by the runner only while such a call runs) it does nothing and returns nil, so the same
    # code runs whether or not the version has Insights on.
    def report_insights(insights)
      token = non_empty(ENV["ALGOHOST_INSIGHTS_TOKEN"])
      return nil if token.nil?

      report = insights.to_h.map { |k, v| { "insight_key" => k.to_s, "insight_value" => v } }
      status, headers, data = request("POST", "/v1/insights", body: JSON.generate(report), content_type: "application/json",
                                                              headers: { "X-Algohost-Insights-Token" => token }, auth: false)
      raise ApiError, Algorithmia.error_message(status, headers, data) if status >= 300

      JSON.parse(data)
    end

    # One HTTP request to the service; returns [status, headers (lower-case names), body] whatever
    # its status.
    def request(method, path, body: nil, content_type: nil, accept: nil, query: nil, timeout: DEFAULT_TIMEOUT + 60,
                headers: {}, auth: true)
      key = api_key || non_empty(ENV["ALGORITHMIA_API_KEY"])
      raise ApiKeyMissingError if auth && key.nil?
      raise ApiError, "no API address: ALGORITHMIA_API is not set" if api_address.nil? && socket_path.nil?

      require "net/http"
      require "socket"
      require "uri"
      address = URI.parse(api_address || "http://localhost")
      target = address.path.to_s.sub(%r{/+\z}, "") + path
      params = (query || {}).reject { |_, v| v.nil? }.map { |k, v| [k.to_s, v.to_s] }
      target += "?#{URI.encode_www_form(params)}" unless params.empty?
      http = connection(address)
      http.open_timeout = 30
      http.read_timeout = timeout
      # A HEAD answer announces the length of the body it does not send.
      req = Net::HTTPGenericRequest.new(method, !body.nil?, method != "HEAD", target)
      req["Authorization"] = "Simple #{key}" if auth
      headers.each { |k, v| req[k] = v }
      req["Accept-Encoding"] = "identity"
      req["Connection"] = "close"
      req["Content-Type"] = content_type if content_type
      req["Accept"] = accept if accept
      req.body = body if body
      res = http.start { |h| h.request(req) }
      headers = res.each_header.to_h { |k, v| [k.downcase, v] }
      [res.code.to_i, headers, (res.body || +"").b]
    end

    private

    def connection(address)
      if socket_path
        http = Algorithmia.unix_http_class.new(address.host || "localhost", address.port || 80)
        http.socket_path = socket_path
        return http
      end
      http = Net::HTTP.new(address.host, address.port)
      http.use_ssl = address.scheme == "https"
      http
    end

    def non_empty(value)
      value.nil? || value.empty? ? nil : value
    end
  end

  # Algorithmia.client([api_key], [api_address]) as in the Algorithmia Ruby client.
  def self.client(api_key = nil, api_address = nil)
    Client.new(api_key, api_address)
  end
end
