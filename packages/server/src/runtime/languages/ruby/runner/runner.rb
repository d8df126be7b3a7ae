# frozen_string_literal: true

# The Ruby (3.1) runner harness: the pipe protocol of docs/compatibility.md §4 and the contract of
# catalog/templates/README.md. Started once per warm runner with the built algorithm as the
# working directory; it loads src/<Name>.rb once at top level (its top-level code is the load
# step; `require "bundler/setup"` first when there is a Gemfile), prints PIPE_INIT_COMPLETE,
# then answers one JSON request per stdin line with exactly one JSON line on the response FIFO.
# The algorithm's prints stay on stdout/stderr (the call's stdout); responses go only to the
# FIFO. Everything lives in one module, so that the user's top-level methods cannot replace it.
module AlgohostRunner
  SENTINEL = "PIPE_INIT_COMPLETE"
  FIFO = ENV.fetch("ALGOHOST_RESPONSE_FIFO", "/tmp/algoout")
  HARNESS_DIR = __dir__

  # A failure of the harness itself (bad input, no entry point), with the type to answer.
  class Failure < StandardError
    attr_reader :error_type

    def initialize(error_type, message)
      super(message)
      @error_type = error_type
    end
  end

  class << self
    # Loads the algorithm once; returns the error that made it fail, or nil.
    def load_algorithm
      gemfile = File.expand_path("Gemfile")
      if File.file?(gemfile)
        ENV["BUNDLE_GEMFILE"] = gemfile
        require "bundler/setup"
      end
      # After Bundler, so that a json pinned in Gemfile.lock is the one activated.
      require "json"
      entry = "src/#{algorithm_name}.rb"
      raise Failure.new("LoadingError", "the entry point #{entry} does not exist") unless File.file?(entry)

      Kernel.load(File.expand_path(entry))
      unless Object.private_method_defined?(:apply) || Object.method_defined?(:apply)
        raise Failure.new("LoadingError", "#{entry} does not define apply(input)")
      end

      nil
    rescue SignalException
      raise
    rescue Exception => e # SyntaxError, LoadError, exit… all mean the load failed
      require "json"
      e
    end

    # algoname from algorithmia.conf, else the name the service passed in.
    def algorithm_name
      conf = JSON.parse(File.read("algorithmia.conf"))
      name = conf["algoname"] if conf.is_a?(Hash)
      return name if name.is_a?(String) && !name.empty?

      ENV.fetch("ALGOHOST_ALGORITHM_NAME", "Algorithm")
    rescue StandardError
      ENV.fetch("ALGOHOST_ALGORITHM_NAME", "Algorithm")
    end

    # The request's data as apply receives it: text → UTF-8 String, binary → ASCII-8BIT String,
    # json → the parsed value (string keys).
    def convert_input(request)
      raise Failure.new("InputError", "the request is not a JSON object") unless request.is_a?(Hash)

      data = request["data"]
      case request["content_type"]
      when "json"
        data
      when "text"
        raise Failure.new("InputError", "text input must be a string") unless data.is_a?(String)

        data.dup.force_encoding(Encoding::UTF_8)
      when "binary"
        raise Failure.new("InputError", "binary input must be base64") unless data.is_a?(String)

        begin
          data.unpack1("m0")
        rescue ArgumentError
          raise Failure.new("InputError", "binary input must be base64")
        end
      else
        raise Failure.new("InputError", "unknown content_type #{request['content_type'].inspect} (json, text or binary)")
      end
    end

    # Result classification: ASCII-8BIT String → binary, other String → text, else JSON.
    def success_response(result)
      if result.is_a?(String) && result.encoding == Encoding::ASCII_8BIT
        return JSON.generate({ "result" => [result].pack("m0"), "metadata" => { "content_type" => "binary" } })
      end

      if result.is_a?(String)
        text = result.encoding == Encoding::UTF_8 ? result : result.encode(Encoding::UTF_8)
        raise Failure.new("AlgorithmError", "the result is not valid UTF-8 text") unless text.valid_encoding?

        return JSON.generate({ "result" => text, "metadata" => { "content_type" => "text" } })
      end

      begin
        json = JSON.generate(result)
      rescue StandardError => e
        raise Failure.new("AlgorithmError", "the result cannot be serialized as JSON: #{e.message}")
      end
      %({"result":#{json},"metadata":{"content_type":"json"}})
    end

    # The error envelope; error_type is `type` when given, else the error's own string error_type,
    # else the default.
    def error_response(error, default_type, type: nil)
      type ||= own_error_type(error) || (error.is_a?(NoMemoryError) ? "OutOfMemoryError" : default_type)
      trace = error.is_a?(Failure) ? "" : stack_trace(error)
      JSON.generate({ "error" => {
                      "message" => text_of(error.message), "stacktrace" => trace, "stack_trace" => trace, "error_type" => type
                    } })
    end

    def own_error_type(error)
      type = error.error_type if error.respond_to?(:error_type)
      type = error.instance_variable_get(:@error_type) unless type.is_a?(String)
      type.is_a?(String) && !type.empty? ? type : nil
    rescue StandardError
      nil
    end

    # "Class: message" and the backtrace without the harness's own frames.
    def stack_trace(error)
      frames = (error.backtrace || []).reject { |line| line.start_with?(HARNESS_DIR) }
      text_of(["#{error.class}: #{error.message}", *frames.map { |f| "\tfrom #{f}" }].join("\n"))
    end

    def text_of(value)
      s = value.to_s.dup
      s = s.force_encoding(Encoding::UTF_8) if s.encoding == Encoding::ASCII_8BIT
      s = s.encode(Encoding::UTF_8) unless s.encoding == Encoding::UTF_8
      s.scrub
    rescue StandardError
      value.to_s.b.scrub
    end

    def handle(line, load_error)
      response =
        if load_error
          # The load error's own type never replaces LoadingError.
          error_response(load_error, "LoadingError", type: "LoadingError")
        else
          begin
            request = parse_request(line)
            input = convert_input(request)
            success_response(with_call_env(request) { TOPLEVEL_BINDING.receiver.__send__(:apply, input) })
          rescue SystemExit, SignalException
            raise
          rescue Exception => e # any failure of apply (NoMemoryError, SystemStackError…) is the call's error
            error_response(e, "AlgorithmError")
          end
        end
      flush_output
      write_marks
      respond(response)
    end

    # What the service passes for this call only, in the environment while the call runs and not
    # after: a key scoped to it (pipeline_enabled algorithms; Algorithmia.client reads it), where an
    # Event Flow's input came from (ALGOHOST_EVENT as JSON: topic, partition, offset, key…, so the
    # algorithm can be idempotent) and the Insights token (versions with insights_enabled).
    def with_call_env(request)
      values = {
        "ALGORITHMIA_API_KEY" => request["api_key"],
        "ALGOHOST_EVENT" => request["event"].is_a?(Hash) ? JSON.generate(request["event"]) : nil,
        "ALGOHOST_INSIGHTS_TOKEN" => request["insights_token"],
      }.select { |_, v| v.is_a?(String) && !v.empty? }
      previous = values.keys.to_h { |k| [k, ENV.fetch(k, nil)] }
      values.each { |k, v| ENV[k] = v }
      begin
        yield
      ensure
        previous.each { |k, v| ENV[k] = v }
      end
    end

    def parse_request(line)
      JSON.parse(line)
    rescue JSON::ParserError => e
      raise Failure.new("InputError", "the request is not JSON: #{e.message}")
    end

    # Ruby buffers STDOUT on a pipe or socket (and whatever $stdout the algorithm set): pushed to
    # the service before the mark and the response. A StringIO or a closed IO has nothing to push.
    def flush_output
      [$stdout, $stderr, STDOUT, STDERR].uniq.each do |io|
        io.flush
      rescue StandardError
        nil
      end
    end

    # The harness's own copies of fds 1 and 2, taken before any user code runs, so that an
    # algorithm that closes or reopens STDOUT/STDERR (or fds 1 and 2) loses no mark and no
    # sentinel. Ruby's dup is close-on-exec: the algorithm's subprocesses never get them.
    def take_outputs
      @outputs = [STDOUT, STDERR].map do |io|
        copy = io.dup
        copy.binmode
        copy.sync = true
        copy
      rescue StandardError
        io # no fd to copy: the stream itself
      end
      # Out of the environment before user code runs: an algorithm (or subprocess) that prints its
      # environment must not print the mark.
      mark = ENV.delete("ALGOHOST_OUTPUT_MARK")
      @mark = mark.nil? || mark.empty? ? nil : mark.b
    end

    # Ends this call's output (templates/README.md, "Output marks"): the mark once on stdout and
    # once on stderr, after flush_output and before the response; nothing without
    # ALGOHOST_OUTPUT_MARK.
    def write_marks
      return unless @mark

      @outputs.each do |io|
        io.write(@mark)
      rescue StandardError
        nil # the service closed the stream: it reads no marks any more
      end
    end

    # One response: one line on the FIFO, which the first response opens and later ones reuse
    # (two system calls fewer per call than opening and closing it for each one).
    def respond(line)
      data = "#{line}\n".b
      @response ||= File.open(FIFO, File::WRONLY | File::BINARY)
      begin
        syswrite_all(@response, data)
      rescue Errno::EBADF
        # The algorithm closed the harness's descriptor: nothing of this response went out, so it
        # goes whole through the FIFO opened again. The old IO (unbuffered: only syswrite) must
        # not close its number later, which by then may be another file's.
        @response.autoclose = false
        @response = File.open(FIFO, File::WRONLY | File::BINARY)
        syswrite_all(@response, data)
      end
    end

    def syswrite_all(io, data)
      written = 0
      written += io.syswrite(data.byteslice(written..)) while written < data.bytesize
    end

    def main
      # The requests are the harness's alone: the algorithm's STDIN reads /dev/null from now on.
      requests = STDIN.dup
      STDIN.reopen(File::NULL)
      take_outputs
      # `require "algorithmia"` finds the in-sandbox client (a Gemfile's own gems come first).
      $LOAD_PATH.unshift(File.join(HARNESS_DIR, "lib"))
      load_error = load_algorithm
      flush_output
      # Through the harness's own fd 1: the load step may have closed or reopened STDOUT.
      @outputs[0].write("#{SENTINEL}\n")
      @outputs[0].flush

      requests.binmode
      while (line = requests.gets)
        line = line.force_encoding(Encoding::UTF_8)
        next if line.strip.empty?

        handle(line, load_error)
      end
      flush_output
      exit(0)
    end
  end
end

AlgohostRunner.main
