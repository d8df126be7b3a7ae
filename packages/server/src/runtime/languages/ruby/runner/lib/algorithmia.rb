# frozen_string_literal: true

# The in-algorithm API client for Ruby algorithms: `require "algorithmia"` finds it (the harness
# puts this directory on $LOAD_PATH). `Algorithmia.client.algo("owner/name/version").pipe(input)`
# calls another algorithm and returns a response with #result and #metadata; an error envelope
# raises Algorithmia::AlgorithmError with its message (and error_type). Address: the api_address
# argument, else $ALGORITHMIA_API; when $ALGOHOST_API_SOCKET names a Unix socket every request
# goes over it. Key: the api_key argument, else $ALGORITHMIA_API_KEY, which the service sets only
# for algorithms with pipeline_enabled. Only the standard library (net/http loads on first use).
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
      @api_key = api_key || non_empty(ENV["ALGORITHMIA_API_KEY"])
      @api_address = api_address || non_empty(ENV["ALGORITHMIA_API"])
      @socket_path = non_empty(ENV["ALGOHOST_API_SOCKET"])
    end

    def algo(ref)
      Algorithm.new(self, ref)
    end

    # One HTTP request to the service; returns [status, headers (lower-case names), body] whatever
    # its status.
    def request(method, path, body: nil, content_type: nil, query: nil, timeout: DEFAULT_TIMEOUT + 60)
      raise ApiKeyMissingError if api_key.nil? || api_key.empty?
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
      req = Net::HTTPGenericRequest.new(method, !body.nil?, true, target)
      req["Authorization"] = "Simple #{api_key}"
      req["Accept-Encoding"] = "identity"
      req["Connection"] = "close"
      req["Content-Type"] = content_type if content_type
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
